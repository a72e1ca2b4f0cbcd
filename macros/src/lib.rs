//! Derives that make a Rust type usable as a Tessera form response, checked at compile time.
//!
//! `#[derive(FormSchema)]` implements `tessera::forms::FormSchemaType` for a struct with named
//! fields, and the field traits so the struct can itself be a field: an object, `Option` of it an
//! optional object, `Vec` of it a list of records. Every field's type is used through the
//! `tessera::forms::FormFieldType` trait, which is implemented only for the types a browser form
//! can produce; any other type (a struct without the derive, `Vec<i64>`, a map, `Option<Vec<…>>`,
//! `Vec<Vec<S>>`) fails to compile with an error pointing at that field, and `const` assertions
//! refuse a list of records inside a record and nesting deeper than the subset allows.
//! `#[derive(FormEnum)]` makes a unit-only enum a string enum field.
//!
//! Both read the serde attributes that change names (`rename`, `rename_all`) and presence
//! (`skip`, `default`), so the schema describes what serde will deserialize. The generated code
//! names `::tessera::forms`, so it is meant for crates that depend on `tessera` (the `tessera`
//! crate itself declares `extern crate self as tessera`). The documentation and the
//! `compile_fail` examples live on `tessera::forms::typed`, where they run.

use proc_macro::TokenStream;
use proc_macro2::{Literal, Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned, ToTokens};
use syn::{
    meta::ParseNestedMeta, parse_macro_input, spanned::Spanned, Attribute, Data, DeriveInput, Expr,
    ExprLit, ExprUnary, Fields, Lit, LitStr, UnOp,
};

/// Implements `tessera::forms::FormSchemaType` for a struct with named fields whose types are all
/// form field types; see `tessera::forms::typed` for the accepted types and the `#[form(…)]` rules.
#[proc_macro_derive(FormSchema, attributes(form, serde))]
pub fn derive_form_schema(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    form_schema(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `tessera::forms::FormEnum` (and the field traits) for an enum of unit variants; the
/// options are the variant names after serde's `rename`/`rename_all`.
#[proc_macro_derive(FormEnum, attributes(serde))]
pub fn derive_form_enum(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    form_enum(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn form_schema(input: &DeriveInput) -> syn::Result<TokenStream2> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "FormSchema cannot be derived for a generic type",
        ));
    }
    let fields =
        match &input.data {
            Data::Struct(data) => {
                match &data.fields {
                    Fields::Named(named) => &named.named,
                    _ => return Err(syn::Error::new(
                        input.ident.span(),
                        "FormSchema needs a struct with named fields: each field is one form field",
                    )),
                }
            }
            Data::Enum(_) => return Err(syn::Error::new(
                input.ident.span(),
                "FormSchema is for a struct of fields; use #[derive(FormEnum)] for a string enum",
            )),
            Data::Union(_) => {
                return Err(syn::Error::new(
                    input.ident.span(),
                    "FormSchema cannot be derived for a union",
                ))
            }
        };
    let container = SerdeAttributes::parse(&input.attrs)?;
    let mut field_exprs = Vec::new();
    let mut field_types = Vec::new();
    for field in fields {
        let serde = SerdeAttributes::parse(&field.attrs)?;
        if serde.skip {
            continue;
        }
        if let Some(span) = serde.flatten {
            return Err(syn::Error::new(
                span,
                "#[serde(flatten)] is not allowed in a form: a form has a fixed set of named fields; list the fields here, or make the inner struct a field (an object)",
            ));
        }
        let Some(ident) = &field.ident else { continue };
        let rust_name = ident.to_string().trim_start_matches("r#").to_owned();
        let name = match (&serde.rename, container.rename_all) {
            (Some(rename), _) => rename.clone(),
            (None, Some(rule)) => rule.apply_to_field(&rust_name),
            (None, None) => rust_name,
        };
        if name.starts_with('_') || name.is_empty() {
            return Err(syn::Error::new(
                ident.span(),
                "form field names starting with `_` are reserved for the framework (_csrf, _action); rename the field",
            ));
        }
        if name.contains(['.', '[', ']']) {
            return Err(syn::Error::new(
                ident.span(),
                "a form field name cannot contain `.`, `[` or `]`: controls are named by paths like address.city and line_items[0].sku",
            ));
        }
        let rules = FormAttributes::parse(&field.attrs)?;
        let description = rules
            .description
            .clone()
            .or_else(|| doc_comment(&field.attrs));
        let ty = &field.ty;
        field_types.push(ty.clone());
        let optional = serde.default || container.default;
        let mut kind = quote_spanned! {ty.span()=>
            <#ty as ::tessera::forms::FormFieldType>::field_kind()
        };
        if rules.has_text_rules() {
            let format = option_tokens(rules.format.as_ref().map(|(format, _)| {
                let variant = syn::Ident::new(format_variant(format), Span::call_site());
                quote! { ::tessera::forms::StringFormat::#variant }
            }));
            let min_length = option_tokens(rules.min_length.map(|value| quote! { #value }));
            let max_length = option_tokens(rules.max_length.map(|value| quote! { #value }));
            let pattern = option_tokens(rules.pattern.as_ref().map(|pattern| quote! { #pattern }));
            let span = rules.text_span.unwrap_or_else(|| ty.span());
            kind = quote_spanned! {span=>
                ::tessera::forms::typed::text_rules::<#ty>(#kind, #format, #min_length, #max_length, #pattern)
            };
        }
        if rules.minimum.is_some() || rules.maximum.is_some() {
            let minimum = option_tokens(
                rules
                    .minimum
                    .map(|value| Literal::f64_suffixed(value).into_token_stream()),
            );
            let maximum = option_tokens(
                rules
                    .maximum
                    .map(|value| Literal::f64_suffixed(value).into_token_stream()),
            );
            let span = rules.number_span.unwrap_or_else(|| ty.span());
            kind = quote_spanned! {span=>
                ::tessera::forms::typed::number_rules::<#ty>(#kind, #minimum, #maximum)
            };
        }
        if rules.min_items.is_some() || rules.max_items.is_some() {
            let min_items = option_tokens(rules.min_items.map(|value| quote! { #value }));
            let max_items = option_tokens(rules.max_items.map(|value| quote! { #value }));
            let span = rules.list_span.unwrap_or_else(|| ty.span());
            kind = quote_spanned! {span=>
                ::tessera::forms::typed::list_rules::<#ty>(#kind, #min_items, #max_items)
            };
        }
        let title = option_tokens(
            rules
                .title
                .map(|title| quote! { ::std::string::String::from(#title) }),
        );
        let description = option_tokens(
            description.map(|description| quote! { ::std::string::String::from(#description) }),
        );
        let required = quote_spanned! {ty.span()=>
            <#ty as ::tessera::forms::FormFieldType>::REQUIRED && !#optional
        };
        field_exprs.push(quote! {
            ::tessera::forms::FormField {
                name: ::std::string::String::from(#name),
                title: #title,
                description: #description,
                default: ::std::option::Option::None,
                examples: ::std::vec::Vec::new(),
                required: #required,
                kind: #kind,
            }
        });
    }
    let ident = &input.ident;
    // What the fields hold, worked out by the compiler from their types: whether a list of
    // records is among them (directly or deeper), whether one sits inside a record, and how deep
    // objects nest. The `const` items below fail to compile when the struct is outside the subset.
    let has_records = field_types.iter().map(|ty| {
        quote_spanned! {ty.span()=> <#ty as ::tessera::forms::FormFieldType>::HAS_RECORDS }
    });
    let records_in_records = field_types.iter().map(|ty| {
        quote_spanned! {ty.span()=> <#ty as ::tessera::forms::FormFieldType>::RECORDS_IN_RECORDS }
    });
    let depths = field_types.iter().map(|ty| {
        quote_spanned! {ty.span()=> <#ty as ::tessera::forms::FormFieldType>::DEPTH }
    });
    let outside_records = format!(
        "`{ident}` holds a list of records inside a record, which a form cannot show; make the inner list a separate Vec keyed by the outer record, or a Vec<String>"
    );
    let too_deep = format!(
        "`{ident}` nests structs deeper than a form allows (4 levels of objects and lists of records); flatten the innermost level"
    );
    Ok(quote! {
        #[automatically_derived]
        impl ::tessera::forms::FormSchemaType for #ident {
            const HAS_RECORDS: bool = false #(|| #has_records)*;
            const RECORDS_IN_RECORDS: bool = false #(|| #records_in_records)*;
            const DEPTH: usize = ::tessera::forms::typed::deepest(&[#(#depths),*]);
            fn form_schema() -> ::tessera::forms::FormSchema {
                ::tessera::forms::FormSchema::new(::std::vec![#(#field_exprs),*])
            }
        }

        const _: () = ::std::assert!(
            !<#ident as ::tessera::forms::FormSchemaType>::RECORDS_IN_RECORDS,
            #outside_records
        );
        const _: () = ::std::assert!(
            <#ident as ::tessera::forms::FormSchemaType>::DEPTH <= ::tessera::forms::schema::MAX_NESTING,
            #too_deep
        );

        /// A nested struct is an object field (a fieldset).
        #[automatically_derived]
        impl ::tessera::forms::FormFieldType for #ident {
            const REQUIRED: bool = true;
            const HAS_RECORDS: bool = <Self as ::tessera::forms::FormSchemaType>::HAS_RECORDS;
            const RECORDS_IN_RECORDS: bool =
                <Self as ::tessera::forms::FormSchemaType>::RECORDS_IN_RECORDS;
            const DEPTH: usize = <Self as ::tessera::forms::FormSchemaType>::DEPTH + 1;
            fn field_kind() -> ::tessera::forms::FieldKind {
                ::tessera::forms::FieldKind::Object {
                    fields: <Self as ::tessera::forms::FormSchemaType>::form_schema().fields,
                }
            }
        }

        /// `Option<Struct>` is an optional object: left empty, it is absent.
        #[automatically_derived]
        impl ::tessera::forms::FormScalar for #ident {
            const HAS_RECORDS: bool = <Self as ::tessera::forms::FormSchemaType>::HAS_RECORDS;
            const RECORDS_IN_RECORDS: bool =
                <Self as ::tessera::forms::FormSchemaType>::RECORDS_IN_RECORDS;
            const DEPTH: usize = <Self as ::tessera::forms::FormSchemaType>::DEPTH + 1;
            fn scalar_kind() -> ::tessera::forms::FieldKind {
                <Self as ::tessera::forms::FormFieldType>::field_kind()
            }
        }

        /// `Vec<Struct>` is a list of records.
        #[automatically_derived]
        impl ::tessera::forms::FormListItem for #ident {
            const IS_RECORD: bool = true;
            const RECORD_HAS_RECORDS: bool = <Self as ::tessera::forms::FormSchemaType>::HAS_RECORDS;
            const DEPTH: usize = <Self as ::tessera::forms::FormSchemaType>::DEPTH + 1;
            fn list_kind() -> ::tessera::forms::FieldKind {
                ::tessera::forms::FieldKind::RecordList {
                    fields: <Self as ::tessera::forms::FormSchemaType>::form_schema().fields,
                    min_items: ::std::option::Option::None,
                    max_items: ::std::option::Option::None,
                }
            }
        }
    })
}

fn form_enum(input: &DeriveInput) -> syn::Result<TokenStream2> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "FormEnum cannot be derived for a generic type",
        ));
    }
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "FormEnum is for an enum of unit variants; use #[derive(FormSchema)] for a struct",
        ));
    };
    let container = SerdeAttributes::parse(&input.attrs)?;
    let mut options: Vec<String> = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(syn::Error::new(
                variant.span(),
                "FormEnum variants must be unit variants: a form sends one string per choice",
            ));
        }
        let serde = SerdeAttributes::parse(&variant.attrs)?;
        if serde.skip {
            continue;
        }
        let rust_name = variant
            .ident
            .to_string()
            .trim_start_matches("r#")
            .to_owned();
        let option = match (&serde.rename, container.rename_all) {
            (Some(rename), _) => rename.clone(),
            (None, Some(rule)) => rule.apply_to_variant(&rust_name),
            (None, None) => rust_name,
        };
        if option.is_empty() {
            return Err(syn::Error::new(
                variant.span(),
                "an option cannot be \"\": a form sends \"\" for no choice",
            ));
        }
        if options.contains(&option) {
            return Err(syn::Error::new(
                variant.span(),
                format!("two variants are both named \"{option}\""),
            ));
        }
        options.push(option);
    }
    if options.is_empty() {
        return Err(syn::Error::new(
            input.ident.span(),
            "FormEnum needs at least one variant",
        ));
    }
    let ident = &input.ident;
    Ok(quote! {
        #[automatically_derived]
        impl ::tessera::forms::FormEnum for #ident {
            const OPTIONS: &'static [&'static str] = &[#(#options),*];
        }
        #[automatically_derived]
        impl ::tessera::forms::FormScalar for #ident {
            fn scalar_kind() -> ::tessera::forms::FieldKind {
                ::tessera::forms::FieldKind::enumeration(
                    <Self as ::tessera::forms::FormEnum>::OPTIONS.iter().copied(),
                )
            }
        }
        #[automatically_derived]
        impl ::tessera::forms::FormFieldType for #ident {
            const REQUIRED: bool = true;
            fn field_kind() -> ::tessera::forms::FieldKind {
                <Self as ::tessera::forms::FormScalar>::scalar_kind()
            }
        }
        #[automatically_derived]
        impl ::tessera::forms::typed::FormListItem for #ident {
            fn list_kind() -> ::tessera::forms::FieldKind {
                ::tessera::forms::FieldKind::enum_array(
                    <Self as ::tessera::forms::FormEnum>::OPTIONS.iter().copied(),
                )
            }
        }
    })
}

fn option_tokens(value: Option<TokenStream2>) -> TokenStream2 {
    match value {
        Some(value) => quote! { ::std::option::Option::Some(#value) },
        None => quote! { ::std::option::Option::None },
    }
}

/// The doc comment of an item, one space of indentation removed per line, or `None` if blank.
fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("doc")) {
        if let syn::Meta::NameValue(name_value) = &attr.meta {
            if let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &name_value.value
            {
                let value = text.value();
                if value.is_empty() {
                    // An empty `///` line: a paragraph break.
                    lines.push(String::new());
                }
                for line in value.lines() {
                    lines.push(line.strip_prefix(' ').unwrap_or(line).to_owned());
                }
            }
        }
    }
    let joined = lines.join("\n").trim().to_owned();
    (!joined.is_empty()).then_some(joined)
}

/// The serde attributes that change a field's or variant's name or presence.
#[derive(Default)]
struct SerdeAttributes {
    rename: Option<String>,
    rename_all: Option<RenameRule>,
    skip: bool,
    default: bool,
    flatten: Option<Span>,
}

impl SerdeAttributes {
    fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut parsed = Self::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    if let Some(name) = deserialize_name(&meta)? {
                        parsed.rename = Some(name.value());
                    }
                } else if meta.path.is_ident("rename_all") {
                    if let Some(rule) = deserialize_name(&meta)? {
                        parsed.rename_all = Some(RenameRule::parse(&rule)?);
                    }
                } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                    parsed.skip = true;
                } else if meta.path.is_ident("default") {
                    parsed.default = true;
                    skip_meta(&meta)?;
                } else if meta.path.is_ident("flatten") {
                    parsed.flatten = Some(meta.path.span());
                } else {
                    skip_meta(&meta)?;
                }
                Ok(())
            })?;
        }
        Ok(parsed)
    }
}

/// Reads `key = "x"` or `key(deserialize = "x", …)`: the name serde uses when reading.
fn deserialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(syn::Token![=]) {
        return Ok(Some(meta.value()?.parse()?));
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            name = Some(inner.value()?.parse()?);
        } else {
            skip_meta(&inner)?;
        }
        Ok(())
    })?;
    Ok(name)
}

/// Consumes an attribute entry this derive does not need (`= value` or `(…)`).
fn skip_meta(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_meta(&inner))?;
    }
    Ok(())
}

/// `#[form(…)]` on a field: a title, a description, and rules checked against the field's type.
#[derive(Default)]
struct FormAttributes {
    title: Option<String>,
    description: Option<String>,
    format: Option<(String, Span)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<String>,
    text_span: Option<Span>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    number_span: Option<Span>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    list_span: Option<Span>,
}

const FORMATS: &[(&str, &str)] = &[
    ("email", "Email"),
    ("url", "Url"),
    ("uri", "Uri"),
    ("date", "Date"),
    ("date-time", "DateTime"),
];

fn format_variant(format: &str) -> &'static str {
    FORMATS
        .iter()
        .find(|(name, _)| *name == format)
        .map_or("Email", |(_, variant)| variant)
}

impl FormAttributes {
    fn has_text_rules(&self) -> bool {
        self.format.is_some()
            || self.min_length.is_some()
            || self.max_length.is_some()
            || self.pattern.is_some()
    }

    fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut parsed = Self::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("form")) {
            attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                match key.as_str() {
                    "title" => parsed.title = Some(meta.value()?.parse::<LitStr>()?.value()),
                    "description" => parsed.description = Some(meta.value()?.parse::<LitStr>()?.value()),
                    "format" => {
                        let format: LitStr = meta.value()?.parse()?;
                        if !FORMATS.iter().any(|(name, _)| *name == format.value()) {
                            return Err(syn::Error::new(
                                format.span(),
                                "unknown format; use email, url, uri, date or date-time",
                            ));
                        }
                        parsed.format = Some((format.value(), format.span()));
                        parsed.text_span = Some(span);
                    }
                    "min_length" | "max_length" => {
                        let value = meta.value()?.parse::<syn::LitInt>()?.base10_parse::<u64>()?;
                        if key == "min_length" {
                            parsed.min_length = Some(value);
                        } else {
                            parsed.max_length = Some(value);
                        }
                        parsed.text_span = Some(span);
                    }
                    "pattern" => {
                        let pattern: LitStr = meta.value()?.parse()?;
                        if let Err(error) = regex_syntax::Parser::new().parse(&pattern.value()) {
                            return Err(syn::Error::new(pattern.span(), format!("invalid pattern: {error}")));
                        }
                        parsed.pattern = Some(pattern.value());
                        parsed.text_span = Some(span);
                    }
                    "minimum" | "maximum" => {
                        let value = number_literal(&meta.value()?.parse::<Expr>()?)?;
                        if key == "minimum" {
                            parsed.minimum = Some(value);
                        } else {
                            parsed.maximum = Some(value);
                        }
                        parsed.number_span = Some(span);
                    }
                    "min_items" | "max_items" => {
                        let value = meta.value()?.parse::<syn::LitInt>()?.base10_parse::<u64>()?;
                        if key == "min_items" {
                            parsed.min_items = Some(value);
                        } else {
                            parsed.max_items = Some(value);
                        }
                        parsed.list_span = Some(span);
                    }
                    _ => {
                        return Err(meta.error(
                            "unknown form rule; use title, description, format, min_length, max_length, pattern, minimum, maximum, min_items or max_items",
                        ))
                    }
                }
                Ok(())
            })?;
        }
        if let (Some(low), Some(high)) = (parsed.min_length, parsed.max_length) {
            if low > high {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "min_length is greater than max_length",
                ));
            }
        }
        if let (Some(low), Some(high)) = (parsed.minimum, parsed.maximum) {
            if low > high {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "minimum is greater than maximum",
                ));
            }
        }
        if let (Some(low), Some(high)) = (parsed.min_items, parsed.max_items) {
            if low > high {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "min_items is greater than max_items",
                ));
            }
        }
        Ok(parsed)
    }
}

/// A number literal, optionally negative, as `f64`.
fn number_literal(expr: &Expr) -> syn::Result<f64> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => int.base10_parse::<f64>(),
        Expr::Lit(ExprLit {
            lit: Lit::Float(float),
            ..
        }) => float.base10_parse::<f64>(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => number_literal(expr).map(|value| -value),
        other => Err(syn::Error::new(other.span(), "expected a number literal")),
    }
}

/// serde's `rename_all` rules, spelled as serde spells them.
#[derive(Clone, Copy)]
enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn parse(text: &LitStr) -> syn::Result<Self> {
        Ok(match text.value().as_str() {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return Err(syn::Error::new(text.span(), "unknown rename_all rule")),
        })
    }

    /// Renames a `PascalCase` variant the way serde does.
    fn apply_to_variant(self, variant: &str) -> String {
        match self {
            Self::Pascal => variant.to_owned(),
            Self::Lower => variant.to_ascii_lowercase(),
            Self::Upper => variant.to_ascii_uppercase(),
            Self::Camel => {
                let mut characters = variant.chars();
                characters
                    .next()
                    .map(|first| first.to_ascii_lowercase().to_string() + characters.as_str())
                    .unwrap_or_default()
            }
            Self::Snake => {
                let mut snake = String::new();
                for (index, character) in variant.char_indices() {
                    if index > 0 && character.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(character.to_ascii_lowercase());
                }
                snake
            }
            Self::ScreamingSnake => Self::Snake.apply_to_variant(variant).to_ascii_uppercase(),
            Self::Kebab => Self::Snake.apply_to_variant(variant).replace('_', "-"),
            Self::ScreamingKebab => Self::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    /// Renames a `snake_case` field the way serde does.
    fn apply_to_field(self, field: &str) -> String {
        match self {
            Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for character in field.chars() {
                    if character == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(character.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(character);
                    }
                }
                pascal
            }
            Self::Camel => {
                let pascal = Self::Pascal.apply_to_field(field);
                let mut characters = pascal.chars();
                characters
                    .next()
                    .map(|first| first.to_ascii_lowercase().to_string() + characters.as_str())
                    .unwrap_or_default()
            }
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}
