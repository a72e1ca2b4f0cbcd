//! Loading a JSON Schema field by field: references, one-element `allOf` and `null`
//! alternatives taken apart, then each field's shape read or refused with a reason.

use serde_json::{Map, Value};

use super::{
    bounds, check_options, integer_kind, is_null_schema, number_kind, single_type,
    string_constants, string_keyword, string_kind, string_options, FieldKind, FormField,
    SchemaError, MAX_NESTING, MAX_REFERENCE_DEPTH, UNSUPPORTED_KEYWORDS,
};

fn required_names(path: &str, object: &Map<String, Value>) -> Result<Vec<String>, SchemaError> {
    let refused = || SchemaError::field(path, "\"required\" must be a list of field names");
    match object.get("required") {
        None => Ok(Vec::new()),
        Some(Value::Array(names)) => names
            .iter()
            .map(|name| name.as_str().map(str::to_owned).ok_or_else(refused))
            .collect(),
        Some(_) => Err(refused()),
    }
}

/// Where a field sits: how many objects and lists of records enclose it, and whether one of
/// them is a list of records (a list of records cannot sit inside another).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Scope {
    depth: usize,
    in_record: bool,
}

impl Scope {
    /// The scope inside an object (`record` false) or a list of records (`record` true) at
    /// `path`.
    ///
    /// # Errors
    /// Refuses a list of records inside a record, and structure deeper than [`MAX_NESTING`].
    fn enter(self, path: &str, record: bool) -> Result<Self, SchemaError> {
        if record && self.in_record {
            return Err(SchemaError::field(
                path,
                "a list of records inside a record is not allowed in a form schema; make it a separate list keyed by the outer record, or a list of strings",
            ));
        }
        if self.depth >= MAX_NESTING {
            return Err(SchemaError::field(
                path,
                format!("objects and lists of records nest at most {MAX_NESTING} deep in a form schema; flatten the innermost level"),
            ));
        }
        Ok(Self {
            depth: self.depth + 1,
            in_record: self.in_record || record,
        })
    }
}

/// The path of `name` inside the structure at `parent` (`""` for the form itself), as schema
/// errors name it: `address.city`, `line_items[].quantity`.
fn member_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}
/// Resolves references against the root schema while loading fields.
pub(super) struct Loader<'a> {
    pub(super) root: &'a Map<String, Value>,
}

/// A field schema with `$ref`, one-element `allOf` and `null` alternatives taken apart.
struct Flattened {
    schema: Map<String, Value>,
    nullable: bool,
    /// Options when the schema was a `oneOf`/`anyOf` of string constants.
    options: Option<Vec<String>>,
}

impl Loader<'_> {
    /// The fields of an object schema (the form itself when `path` is empty): its `properties`,
    /// `required` and `additionalProperties`, each property loaded in turn.
    pub(super) fn members(
        &self,
        path: &str,
        object: &Map<String, Value>,
        scope: Scope,
    ) -> Result<Vec<FormField>, SchemaError> {
        match object.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(_) => {
                return Err(SchemaError::field(
                    path,
                    "additionalProperties must be true or false, not a schema; a form has a fixed set of named fields",
                ))
            }
        }
        let required = required_names(path, object)?;
        let empty = Map::new();
        let properties = match object.get("properties") {
            None => &empty,
            Some(Value::Object(properties)) => properties,
            Some(_) => {
                return Err(SchemaError::field(
                    path,
                    "\"properties\" must be an object of field schemas",
                ))
            }
        };
        if let Some(missing) = required
            .iter()
            .find(|name| !properties.contains_key(name.as_str()))
        {
            return Err(SchemaError::field(
                &member_path(path, missing),
                "is listed in \"required\" but has no entry in \"properties\"",
            ));
        }
        if properties.is_empty() && !path.is_empty() {
            return Err(SchemaError::field(
                path,
                "an object needs at least one property; a form cannot show an empty group",
            ));
        }
        properties
            .iter()
            .map(|(name, field_schema)| {
                self.field(
                    &member_path(path, name),
                    name,
                    field_schema,
                    required.contains(name),
                    scope,
                )
            })
            .collect()
    }

    /// Loads one field; `name` is its key, `path` how errors name it.
    fn field(
        &self,
        path: &str,
        member: &str,
        schema: &Value,
        listed_required: bool,
        scope: Scope,
    ) -> Result<FormField, SchemaError> {
        let name = path;
        if member.is_empty() {
            return Err(SchemaError::field(
                path.strip_suffix('.').unwrap_or(""),
                "a field needs a non-empty name",
            ));
        }
        if member.starts_with('_') {
            return Err(SchemaError::field(
                name,
                "names starting with \"_\" are reserved for the framework (like _csrf and _action); rename the field",
            ));
        }
        if member.contains(['.', '[', ']']) {
            return Err(SchemaError::field(
                name,
                "a field name cannot contain \".\", \"[\" or \"]\": a form names nested fields by paths like address.city and line_items[0].sku; rename the field",
            ));
        }
        let flattened = self.flatten_choice(name, schema, 0)?;
        let schema = &flattened.schema;
        if let Some(keyword) = UNSUPPORTED_KEYWORDS
            .iter()
            .find(|keyword| schema.contains_key(**keyword))
        {
            return Err(SchemaError::field(
                name,
                format!("keyword `{keyword}` is not supported in a form schema"),
            ));
        }
        let (type_name, type_nullable) = single_type(name, schema)?;
        // OpenAPI 3.0 writes an optional value as `nullable: true` rather than a `null` type.
        let openapi_nullable = match schema.get("nullable") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => {
                return Err(SchemaError::field(
                    name,
                    "\"nullable\" must be true or false",
                ))
            }
        };
        let mut nullable = flattened.nullable || type_nullable || openapi_nullable;
        if schema.contains_key("multipleOf")
            && !matches!(type_name.as_deref(), Some("number" | "integer"))
        {
            return Err(SchemaError::field(
                name,
                "`multipleOf` applies to numbers only; give the field \"type\": \"number\" or \"integer\"",
            ));
        }
        let mut options = flattened.options;
        let enum_values = match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.as_slice()),
            (Some(_), _) => {
                return Err(SchemaError::field(
                    name,
                    "\"enum\" must be a list of strings",
                ))
            }
            (None, Some(constant)) => Some(std::slice::from_ref(constant)),
            (None, None) => None,
        };
        if let Some(values) = enum_values {
            let (enum_options, enum_nullable) = string_options(name, values)?;
            nullable |= enum_nullable;
            options = Some(enum_options);
        }
        let title = string_keyword(name, schema, "title")?;
        let description = string_keyword(name, schema, "description")?;
        let kind = match (type_name.as_deref(), options) {
            (Some("string") | None, Some(options)) => {
                check_options(name, &options)?;
                FieldKind::Enum { options }
            }
            (Some(other), Some(_)) => {
                return Err(SchemaError::field(
                    name,
                    format!("an enum must be a string enum, not {other}; use string values"),
                ))
            }
            (None, None) => {
                return Err(SchemaError::field(
                    name,
                    "has no \"type\"; give it one of string, number, integer, boolean, array or object",
                ))
            }
            (Some("string"), None) => string_kind(name, schema)?,
            (Some("number"), None) => number_kind(name, schema)?,
            (Some("integer"), None) => integer_kind(name, schema)?,
            (Some("boolean"), None) => FieldKind::Boolean,
            (Some("array"), None) => {
                if nullable {
                    return Err(SchemaError::field(
                        name,
                        "an array field cannot also be null: a form with nothing chosen sends an empty list; drop \"null\"",
                    ));
                }
                self.array_kind(name, schema, scope)?
            }
            (Some("object"), None) => FieldKind::Object {
                fields: self.members(name, schema, scope.enter(name, false)?)?,
            },
            (Some(other), None) => {
                return Err(SchemaError::field(
                    name,
                    format!("type \"{other}\" is not allowed in a form schema; use string, number, integer, boolean or array"),
                ))
            }
        };
        let examples = match schema.get("examples") {
            None => Vec::new(),
            Some(Value::Array(examples)) => examples.clone(),
            Some(_) => {
                return Err(SchemaError::field(
                    name,
                    "\"examples\" must be a list of example values",
                ))
            }
        };
        let mut field = FormField {
            name: member.to_owned(),
            title,
            description,
            default: None,
            examples,
            required: listed_required && !nullable,
            kind,
        };
        match schema.get("default") {
            None | Some(Value::Null) => {}
            Some(default) => {
                crate::validate::validate_field(&field, Some(default)).map_err(|message| {
                    SchemaError::field(
                        name,
                        format!("its \"default\" {default} does not fit the field: {message}"),
                    )
                })?;
                field.default = Some(default.clone());
            }
        }
        Ok(field)
    }

    /// Resolves `$ref` and one-element `allOf`, merging the referring schema's own keywords over
    /// the target's (so a field's description wins over its enum's).
    fn flatten(
        &self,
        name: &str,
        schema: &Value,
        depth: usize,
    ) -> Result<Map<String, Value>, SchemaError> {
        if depth > MAX_REFERENCE_DEPTH {
            return Err(SchemaError::field(
                name,
                "$ref/allOf nest too deeply (is there a cycle?)",
            ));
        }
        let object = match schema {
            Value::Object(object) => object,
            Value::Bool(_) => {
                return Err(SchemaError::field(
                    name,
                    "a field schema must be an object with a \"type\", not true/false",
                ))
            }
            _ => {
                return Err(SchemaError::field(
                    name,
                    "a field schema must be a JSON object",
                ))
            }
        };
        let mut merged = Map::new();
        if let Some(reference) = object.get("$ref") {
            let target = self.resolve(name, reference)?;
            merged = self.flatten(name, target, depth + 1)?;
        }
        if let Some(all_of) = object.get("allOf") {
            match all_of.as_array().map(Vec::as_slice) {
                Some([single]) => merged.extend(self.flatten(name, single, depth + 1)?),
                _ => {
                    return Err(SchemaError::field(
                        name,
                        "allOf with several schemas is not supported; write the field's rules in one schema",
                    ))
                }
            }
        }
        for (key, value) in object {
            if key != "$ref" && key != "allOf" {
                merged.insert(key.clone(), value.clone());
            }
        }
        Ok(merged)
    }

    /// Flattens a field schema and takes apart `anyOf`/`oneOf`: `[X, null]` is an optional `X`,
    /// and a choice between string constants is an enum.
    fn flatten_choice(
        &self,
        name: &str,
        schema: &Value,
        depth: usize,
    ) -> Result<Flattened, SchemaError> {
        let mut schema = self.flatten(name, schema, depth)?;
        let choice = match (schema.remove("anyOf"), schema.remove("oneOf")) {
            (Some(_), Some(_)) => {
                return Err(SchemaError::field(
                    name,
                    "use either anyOf or oneOf, not both; a form field has one type",
                ))
            }
            (Some(choice), None) | (None, Some(choice)) => choice,
            (None, None) => {
                return Ok(Flattened {
                    schema,
                    nullable: false,
                    options: None,
                })
            }
        };
        let branches = choice
            .as_array()
            .ok_or_else(|| SchemaError::field(name, "anyOf/oneOf must be a list of schemas"))?;
        let mut nullable = false;
        let mut others = Vec::new();
        for branch in branches {
            let flattened = self.flatten(name, branch, depth + 1)?;
            if is_null_schema(&flattened) {
                nullable = true;
            } else {
                others.push(flattened);
            }
        }
        match others.as_slice() {
            [] => Err(SchemaError::field(
                name,
                "a field cannot only be null; give it a type",
            )),
            [single] => {
                // The remaining branch may itself be a choice (schemars' `Option<E>` where `E`'s
                // documented variants are a `oneOf` of constants), so take it apart in turn.
                let mut merged = single.clone();
                merged.extend(schema);
                let mut inner = self.flatten_choice(name, &Value::Object(merged), depth + 1)?;
                inner.nullable |= nullable;
                Ok(inner)
            }
            several => {
                let mut options = Vec::new();
                for branch in several {
                    match string_constants(branch) {
                        Some(constants) => options.extend(constants),
                        None if branch.get("type").and_then(Value::as_str) == Some("object")
                            || branch.contains_key("properties") =>
                        {
                            return Err(SchemaError::field(
                                name,
                                "a choice between object shapes (oneOf/anyOf) is not allowed in a form schema; use a string enum plus separate optional fields",
                            ))
                        }
                        None => {
                            return Err(SchemaError::field(
                                name,
                                "a choice between several types (oneOf/anyOf) is not allowed in a form schema; a field has one type",
                            ))
                        }
                    }
                }
                Ok(Flattened {
                    schema,
                    nullable,
                    options: Some(options),
                })
            }
        }
    }

    fn resolve<'s>(&'s self, name: &str, reference: &Value) -> Result<&'s Value, SchemaError> {
        let text = reference
            .as_str()
            .ok_or_else(|| SchemaError::field(name, "$ref must be a string"))?;
        let unresolved = || {
            SchemaError::field(
                name,
                format!("$ref \"{text}\" does not point into this schema's $defs or definitions"),
            )
        };
        let pointer = text.strip_prefix('#').ok_or_else(unresolved)?;
        let mut segments = pointer
            .split('/')
            .skip(1)
            .map(|segment| segment.replace("~1", "/").replace("~0", "~"));
        let section = segments.next().ok_or_else(unresolved)?;
        if section != "$defs" && section != "definitions" {
            return Err(unresolved());
        }
        let mut current = self.root.get(&section).ok_or_else(unresolved)?;
        for segment in segments {
            current = current.get(&segment).ok_or_else(unresolved)?;
        }
        Ok(current)
    }

    fn array_kind(
        &self,
        name: &str,
        schema: &Map<String, Value>,
        scope: Scope,
    ) -> Result<FieldKind, SchemaError> {
        let (min_items, max_items) = bounds(name, schema, "minItems", "maxItems")?;
        let unique_items = match schema.get("uniqueItems") {
            None => false,
            Some(Value::Bool(unique)) => *unique,
            Some(_) => {
                return Err(SchemaError::field(
                    name,
                    "\"uniqueItems\" must be true or false",
                ))
            }
        };
        let items = match schema.get("items") {
            None => {
                return Err(SchemaError::field(
                    name,
                    "an array field needs \"items\": {\"type\": \"string\"} or a string enum",
                ))
            }
            Some(Value::Array(_)) => {
                return Err(SchemaError::field(
                    name,
                    "tuple arrays (\"items\" as a list) are not allowed in a form schema; use separate fields",
                ))
            }
            Some(items) => self.flatten_choice(name, items, 0)?,
        };
        if items.nullable {
            return Err(SchemaError::field(
                name,
                "array items cannot be null; a form drops empty values instead",
            ));
        }
        let items_schema = &items.schema;
        if let Some(keyword) = UNSUPPORTED_KEYWORDS
            .iter()
            .find(|keyword| items_schema.contains_key(**keyword))
        {
            return Err(SchemaError::field(
                name,
                format!("keyword `{keyword}` is not supported in a form schema"),
            ));
        }
        let (item_type, item_nullable) = single_type(name, items_schema)?;
        if item_nullable {
            return Err(SchemaError::field(
                name,
                "array items cannot be null; a form drops empty values instead",
            ));
        }
        let mut options = items.options;
        if let Some(values) = items_schema.get("enum") {
            let values = values
                .as_array()
                .ok_or_else(|| SchemaError::field(name, "\"enum\" must be a list of strings"))?;
            let (item_options, has_null) = string_options(name, values)?;
            if has_null {
                return Err(SchemaError::field(
                    name,
                    "array items cannot be null; a form drops empty values instead",
                ));
            }
            options = Some(item_options);
        } else if let Some(constant) = items_schema.get("const") {
            let (item_options, _) = string_options(name, std::slice::from_ref(constant))?;
            options = Some(item_options);
        }
        match (item_type.as_deref(), options) {
            (Some("string") | None, Some(options)) => {
                check_options(name, &options)?;
                if min_items.is_some_and(|fewest| fewest > options.len() as u64) {
                    return Err(SchemaError::field(
                        name,
                        format!(
                            "minItems ({}) is more than its {} options; a form can send each option only once",
                            min_items.unwrap_or_default(),
                            options.len()
                        ),
                    ));
                }
                Ok(FieldKind::EnumArray { options, min_items, max_items, unique_items })
            }
            (Some("string"), None) => {
                let FieldKind::String { format, min_length, max_length, pattern } = string_kind(name, items_schema)?
                else {
                    return Err(SchemaError::field(name, "array items must be strings"));
                };
                Ok(FieldKind::StringArray {
                    min_items,
                    max_items,
                    unique_items,
                    item_min_length: min_length,
                    item_max_length: max_length,
                    item_pattern: pattern,
                    item_format: format,
                })
            }
            (Some("object"), None) => {
                if unique_items {
                    return Err(SchemaError::field(
                        name,
                        "uniqueItems is not supported on a list of records; give each record a key field instead",
                    ));
                }
                let record_path = format!("{name}[]");
                let fields =
                    self.members(&record_path, items_schema, scope.enter(name, true)?)?;
                Ok(FieldKind::RecordList { fields, min_items, max_items })
            }
            (Some("object"), Some(_)) => Err(SchemaError::field(
                name,
                "an enum must be a string enum, not object; use string values",
            )),
            (Some("array"), _) => Err(SchemaError::field(
                name,
                "arrays of arrays are not allowed in a form schema; use an array of strings or of a string enum",
            )),
            (Some(other), _) => Err(SchemaError::field(
                name,
                format!(
                    "arrays of {other} are not allowed in a form schema; use an array of strings or of a string enum and convert in the workflow"
                ),
            )),
            (None, None) => Err(SchemaError::field(name, "array items need \"type\": \"string\" or a string enum")),
        }
    }
}
