//! The prompts the loop sends: minijinja templates in `src/agent/prompts/*.j2`, embedded at build.
//!
//! Prompt wording lives in template files (STYLE.md §5), not in Rust strings, so it can be read
//! and changed as text. The user prompt has a fixed layout that code can read back: the request
//! between `<task>` tags, the response schema and the data summary as JSON between their own
//! tags, with every `<` inside the JSON written as `\u003c` so the JSON can never close a tag.
//! The heuristic model reads its input from exactly that layout ([`parse_user_prompt`]), which is
//! how it goes through the same interface as any other model.

use std::sync::OnceLock;

use minijinja::{context, Environment};
use serde_json::Value;
use sha2::{Digest, Sha256};

use tessera_app::catalog::{model_schema, Role};

use super::{
    generate::Problem,
    page_schema::PageRequest,
    summary::{prompt_json, DataSummary},
    tools::{FINISH, GET_PAGE, MOVE_COMPONENT, REMOVE_COMPONENT, UPDATE_COMPONENT, VALIDATE_FORM},
};
use crate::forms::{validate_form::FormIssue, FieldKind, FormField, FormSchema};

const SYSTEM: &str = include_str!("prompts/system.j2");
const USER: &str = include_str!("prompts/user.j2");
const FOLLOW_UP: &str = include_str!("prompts/follow_up.j2");
const PAGE_SYSTEM: &str = include_str!("prompts/page_system.j2");
const REPAIR: &str = include_str!("prompts/repair.j2");

/// Identifies the prompt templates in cache keys: their name and version. Changing a template's
/// text changes [`template_digest`], which is part of the key as well.
pub const TEMPLATE_ID: &str = "page-generation/v1";

/// What the `<response_schema>` section holds for a page without a schema.
pub const NO_SCHEMA: &str = "none: this page only shows data; place no Form and no fields";

fn environment() -> &'static Environment<'static> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        let mut environment = Environment::new();
        environment.set_trim_blocks(true);
        for (name, source) in [
            ("system.j2", SYSTEM),
            ("user.j2", USER),
            ("follow_up.j2", FOLLOW_UP),
            ("page_system.j2", PAGE_SYSTEM),
            ("repair.j2", REPAIR),
        ] {
            if let Err(error) = environment.add_template(name, source) {
                // The templates are compiled into the binary; a syntax error shows in every test.
                tracing::error!(template = name, error = %error, "prompt template does not parse");
            }
        }
        environment
    })
}

/// SHA-256 (hex) of the template sources.
#[must_use]
pub fn template_digest() -> String {
    let mut hasher = Sha256::new();
    for source in [SYSTEM, USER, FOLLOW_UP, PAGE_SYSTEM, REPAIR] {
        hasher.update(source.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// The system prompt.
///
/// # Errors
/// A template error (only when a template file is broken).
pub fn system_prompt(has_schema: bool) -> Result<String, minijinja::Error> {
    environment().get_template("system.j2")?.render(context! {
        has_schema,
        validate_tool => VALIDATE_FORM,
        update_tool => UPDATE_COMPONENT,
        remove_tool => REMOVE_COMPONENT,
        move_tool => MOVE_COMPONENT,
        page_tool => GET_PAGE,
        finish_tool => FINISH,
    })
}

/// The user prompt: the request, the schema as JSON (or [`NO_SCHEMA`]) and the data summary.
///
/// # Errors
/// A template error (only when a template file is broken).
pub fn user_prompt(
    prompt: &str,
    schema: Option<&FormSchema>,
    summary: &DataSummary,
) -> Result<String, minijinja::Error> {
    user_prompt_for(prompt, schema, summary, false)
}

/// [`user_prompt`] for a page answered by named assignees when `for_assignees`: it then says so
/// in a `<people>` section (code names the person; the page offers Decline, not Cancel).
///
/// # Errors
/// A template error (only when a template file is broken).
pub fn user_prompt_for(
    prompt: &str,
    schema: Option<&FormSchema>,
    summary: &DataSummary,
    for_assignees: bool,
) -> Result<String, minijinja::Error> {
    let schema_json = schema.map_or_else(
        || NO_SCHEMA.to_owned(),
        |schema| prompt_json(&schema.to_json_schema()),
    );
    environment().get_template("user.j2")?.render(context! {
        prompt => prompt.trim(),
        for_assignees,
        schema_json,
        summary_json => summary.to_prompt_json(),
    })
}

/// What code tells a model that stopped before the page was valid.
///
/// # Errors
/// A template error (only when a template file is broken).
pub fn follow_up(errors: &[FormIssue]) -> Result<String, minijinja::Error> {
    environment()
        .get_template("follow_up.j2")?
        .render(context! {
            errors => minijinja::Value::from_serialize(errors),
            finish_tool => FINISH,
        })
}

/// The system prompt of a whole-page answer: the answer's format, one line per component the
/// page may use (its role, the first sentence of its description, its props, `?` marking the
/// optional ones) and, for a form, what to place for each field of the response schema.
///
/// # Errors
/// A template error (only when a template file is broken).
pub fn page_system_prompt(
    request: &PageRequest<'_>,
    for_assignees: bool,
) -> Result<String, minijinja::Error> {
    let components: Vec<Value> = request
        .components()
        .map(|spec| {
            let role = match spec.role {
                Role::Layout => "Layout",
                Role::Field => "Field",
                Role::Action => "Action",
                Role::Display => "Display",
            };
            let schema = model_schema(&spec.props_schema);
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props: Vec<String> = schema["properties"]
                .as_object()
                .map(|properties| {
                    properties
                        .keys()
                        .filter(|name| *name != "children")
                        .map(|name| {
                            if required.contains(&name.as_str()) {
                                name.clone()
                            } else {
                                format!("{name}?")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            serde_json::json!({
                "name": spec.name,
                "role": role,
                "description": first_sentence(&spec.description),
                "props": if props.is_empty() { "none".to_owned() } else { props.join(", ") },
            })
        })
        .collect();
    let fields = request
        .schema
        .map(|schema| field_hints(&schema.fields, ""))
        .unwrap_or_default();
    // A real pointer of this page's data makes the binding example concrete; a made-up one
    // gets copied literally by small models.
    let pointer = request
        .summary
        .pointers
        .iter()
        .find(|entry| entry.depth() >= 1 && entry.kind.is_scalar())
        .or_else(|| {
            request
                .summary
                .pointers
                .iter()
                .find(|entry| entry.depth() >= 1)
        })
        .map_or("/title", |entry| entry.pointer.as_str());
    environment()
        .get_template("page_system.j2")?
        .render(context! {
            components,
            fields,
            pointer,
            example => data_example(request.summary),
            computed => computed_example(request.summary),
            has_schema => request.forms,
            for_assignees,
        })
}

/// The first sentence of a component's description: enough to choose it.
fn first_sentence(text: &str) -> &str {
    let end = text.match_indices(". ").find(|(at, _)| {
        text[at + 2..]
            .chars()
            .next()
            .is_some_and(char::is_uppercase)
    });
    end.map_or(text, |(at, _)| &text[..=at]).trim()
}

/// One line per field: its name, its title, whether it is required and what to place for it.
fn field_hints(fields: &[FormField], prefix: &str) -> Vec<String> {
    let mut hints = Vec::new();
    for field in fields {
        let path = format!("{prefix}{}", field.name);
        let required = if field.required { ", required" } else { "" };
        let title = field
            .title
            .as_deref()
            .map(|title| format!(" \"{title}\""))
            .unwrap_or_default();
        let place = match &field.kind {
            FieldKind::String { format, .. } => match format {
                Some(format) if format.as_str() == "date" => "Input with type \"date\"".to_owned(),
                Some(format) if format.as_str() == "email" => {
                    "Input with type \"email\"".to_owned()
                }
                Some(format) if format.as_str() == "url" || format.as_str() == "uri" => {
                    "Input with type \"url\"".to_owned()
                }
                _ if super::heuristic::is_prose(field) => "TextArea".to_owned(),
                _ => "Input".to_owned(),
            },
            FieldKind::Number { .. } | FieldKind::Integer { .. } => {
                "Input with type \"number\"".to_owned()
            }
            FieldKind::Boolean => "Checkbox".to_owned(),
            FieldKind::Enum { options } if options.len() <= 4 => {
                format!("RadioGroup with options {}", quoted(options))
            }
            FieldKind::Enum { options } => format!("Select with options {}", quoted(options)),
            FieldKind::EnumArray { options, .. } => {
                format!("CheckboxGroup with options {}", quoted(options))
            }
            FieldKind::StringArray { .. } => "a Table of the data's rows with `selectable` \
                {name, idKey, label} when the person picks rows, else MultiTextInput"
                .to_owned(),
            FieldKind::Object { fields } => {
                hints.push(format!(
                    "{path}{title}{required}: Fieldset; its fields go inside it:"
                ));
                hints.extend(
                    field_hints(fields, &format!("{path}."))
                        .into_iter()
                        .map(|hint| format!("  {hint}")),
                );
                continue;
            }
            FieldKind::RecordList { .. } => "RecordList (code fills in its columns)".to_owned(),
        };
        hints.push(format!("{path}{title}{required}: {place}"));
    }
    hints
}

fn quoted(options: &[String]) -> String {
    let shown: Vec<String> = options
        .iter()
        .take(12)
        .map(|option| format!("\"{option}\""))
        .collect();
    let more = options.len().saturating_sub(12);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// What code tells a model whose whole-page answer has problems: one line per problem, naming
/// the node by the id the model gave it.
///
/// # Errors
/// A template error (only when a template file is broken).
pub fn repair_message(
    problems: &[Problem],
    summary: &DataSummary,
) -> Result<String, minijinja::Error> {
    let pointers: Vec<&str> = summary
        .pointers
        .iter()
        .filter(|entry| entry.depth() >= 1)
        .map(|entry| entry.pointer.as_str())
        .take(24)
        .collect();
    environment().get_template("repair.j2")?.render(context! {
        problems => minijinja::Value::from_serialize(problems),
        pointers,
    })
}

/// A node showing the data, written with the data's own pointers, as the system prompt's
/// example: a table of the first list of records, else a KeyValue of the first record's facts.
fn data_example(summary: &DataSummary) -> Option<String> {
    let label = |key: &str| {
        let mut label = key.replace('_', " ");
        if let Some(first) = label.get(..1) {
            label.replace_range(..1, &first.to_uppercase());
        }
        label
    };
    if let Some(rows) = summary
        .pointers
        .iter()
        .find(|entry| entry.kind == super::summary::JsonKind::Array && !entry.keys.is_empty())
    {
        let columns: Vec<serde_json::Value> = rows
            .keys
            .iter()
            .take(4)
            .map(|key| serde_json::json!({"key": key, "label": label(key)}))
            .collect();
        let node = serde_json::json!({"component": "Table",
            "props": {"rows": {"$data": rows.pointer}, "columns": columns}});
        return Some(node.to_string());
    }
    let facts: Vec<serde_json::Value> = summary
        .pointers
        .iter()
        .filter(|entry| entry.depth() >= 1 && entry.kind.is_scalar())
        .take(3)
        .map(|entry| serde_json::json!({"label": label(&entry.key()), "value": {"$data": entry.pointer}}))
        .collect();
    (!facts.is_empty()).then(|| {
        serde_json::json!({"component": "KeyValue", "props": {"items": facts}}).to_string()
    })
}

/// A computed binding over the data's first list of records, as the system prompt's example of
/// a total (or a count when no column holds numbers): small models otherwise invent template
/// filters (measured: `{{/project.tasks|sum('hours')}}`).
fn computed_example(summary: &DataSummary) -> Option<String> {
    let rows = summary
        .pointers
        .iter()
        .find(|entry| entry.kind == super::summary::JsonKind::Array && !entry.keys.is_empty())?;
    let numeric = rows.keys.iter().find(|key| {
        rows.samples.iter().any(|row| {
            row.get(key.as_str())
                .is_some_and(serde_json::Value::is_number)
        })
    });
    let binding = match numeric {
        Some(column) => serde_json::json!({"$data": rows.pointer, "$sum": column}),
        None => serde_json::json!({"$data": rows.pointer, "$count": true}),
    };
    Some(binding.to_string())
}

/// The three parts of a user prompt, read back from its layout.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedPrompt {
    /// The request text.
    pub prompt: String,
    /// The response schema, `None` for a display-only page.
    pub schema: Option<FormSchema>,
    /// The data summary.
    pub summary: DataSummary,
    /// The page is answered by named assignees (the `<people>` section).
    pub for_assignees: bool,
}

/// Reads a user prompt rendered by [`user_prompt`] back into its parts; `None` when the text does
/// not have that layout. The sections are found from the end, so a request that itself mentions
/// the tags does not confuse it.
#[must_use]
pub fn parse_user_prompt(text: &str) -> Option<ParsedPrompt> {
    let (before_summary, summary_text) = last_section(text, "data_summary")?;
    let (before_schema, schema_text) = last_section(before_summary, "response_schema")?;
    let task_start = before_schema.find("<task>")? + "<task>".len();
    let task_end = before_schema.rfind("</task>")?;
    let prompt = before_schema.get(task_start..task_end)?.trim().to_owned();
    let for_assignees = before_schema.get(task_end..)?.contains("<people>");
    let summary: DataSummary = serde_json::from_str(summary_text.trim()).ok()?;
    let schema_text = schema_text.trim();
    let schema = if schema_text.starts_with('{') {
        let value: Value = serde_json::from_str(schema_text).ok()?;
        Some(FormSchema::from_json_schema(&value).ok()?)
    } else {
        None
    };
    Some(ParsedPrompt {
        prompt,
        schema,
        summary,
        for_assignees,
    })
}

/// The text before the last `<tag>` and the content of that last `<tag>…</tag>`.
fn last_section<'a>(text: &'a str, tag: &str) -> Option<(&'a str, &'a str)> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let end = text.rfind(&close)?;
    let start = text.get(..end)?.rfind(&open)?;
    Some((text.get(..start)?, text.get(start + open.len()..end)?))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::forms::{FieldKind, FormField};
    use tessera_app::catalog::Catalog;

    #[test]
    fn a_user_prompt_reads_back_into_its_parts() -> anyhow::Result<()> {
        let schema = FormSchema::new(vec![
            FormField::new("note", FieldKind::string()).with_title("Your <note>")
        ]);
        let summary = DataSummary::of(&json!({"emails": [{"id": "m1", "subject": "</task>"}]}));
        let prompt = "Archive old mail. Mention <task> if you like.";
        let text = user_prompt(prompt, Some(&schema), &summary)?;
        let parsed = parse_user_prompt(&text).ok_or_else(|| anyhow::anyhow!("no parse"))?;
        assert_eq!(parsed.prompt, prompt);
        assert_eq!(parsed.schema.as_ref(), Some(&schema));
        assert_eq!(parsed.summary, summary);
        assert!(!parsed.for_assignees);
        let assigned = user_prompt_for(prompt, Some(&schema), &summary, true)?;
        let parsed = parse_user_prompt(&assigned).ok_or_else(|| anyhow::anyhow!("no parse"))?;
        assert!(parsed.for_assignees && parsed.prompt == prompt);
        let display = user_prompt("Stats", None, &summary)?;
        assert!(display.contains(NO_SCHEMA));
        assert_eq!(
            parse_user_prompt(&display).and_then(|parsed| parsed.schema),
            None
        );
        Ok(())
    }

    #[test]
    fn the_system_prompt_names_the_agent_tools_and_the_binding_syntax() -> anyhow::Result<()> {
        let text = system_prompt(true)?;
        for name in [FINISH, VALIDATE_FORM, UPDATE_COMPONENT, REMOVE_COMPONENT] {
            assert!(text.contains(name), "{name} missing");
        }
        assert!(text.contains("{{/json/pointer}}"));
        assert!(text.contains("exactly one Form"));
        assert!(!system_prompt(false)?.contains("exactly one Form"));
        Ok(())
    }

    #[test]
    fn the_system_prompt_says_once_what_the_tool_schemas_leave_out() -> anyhow::Result<()> {
        let system = system_prompt(true)?;
        let tools =
            serde_json::to_string(&crate::agent::tools::tool_definitions(&Catalog::defaults()))?;
        // What each prop and tool used to repeat: the binding rule, the optional `parent` every
        // component call may add, a child node's shape, the shape of a choice's options, what a
        // role means, that a prop may be left out, and which props code takes from the schema.
        let flowing = system.replace("\n  ", " ");
        for rule in [
            "{\"$data\": \"/json/pointer\"}",
            "{{/json/pointer}}",
            "Any call may add \"parent\": a Layout's id",
            "\"children\": [{\"component\": \"Input\", ...its props, \"children\"?}]",
            "Options are strings or {\"value\", \"label\"}",
            "Layout (holds others)",
            "Field (submits under its `name`; inside the Form)",
            "Action (a Button; inside the Form)",
            "leave a prop out for its default",
            "Code fills in what the schema says (type, required, bounds, step, help, placeholder, default)",
        ] {
            assert_eq!(flowing.matches(rule).count(), 1, "{rule:?} in\n{system}");
        }
        // Every rule starts a line of its own, with or without a schema.
        for text in [&system, &system_prompt(false)?] {
            assert!(!text.contains(".-"), "{text}");
        }
        for repeated in ["$data", "json/pointer", "layout", "Role:", "the Form."] {
            assert!(
                !tools.contains(repeated),
                "{repeated:?} is still in the tools"
            );
        }
        Ok(())
    }

    #[test]
    fn the_follow_up_names_each_problem_and_its_fix() -> anyhow::Result<()> {
        let issue = FormIssue {
            node: None,
            field: Some("note".into()),
            rule: "missing_field",
            message: "schema field `note` (a string) has no component".into(),
            fix: "place a TextArea named `note` inside the Form".into(),
        };
        let other = FormIssue {
            node: Some("n2".into()),
            field: None,
            rule: "unknown_prop",
            message: "Input has no prop `colour`".into(),
            fix: "remove `colour`".into(),
        };
        let text = follow_up(&[issue, other])?;
        assert!(text.contains("found 2 problems."), "{text}");
        // One problem a line, as a list the model can work through (they once ran together).
        let items: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("- ["))
            .collect();
        assert_eq!(items.len(), 2, "{text}");
        assert!(
            items[0].starts_with("- [missing_field] field `note`"),
            "{text}"
        );
        assert!(
            items[0].ends_with("Fix: place a TextArea named `note` inside the Form."),
            "{text}"
        );
        assert!(items[1].starts_with("- [unknown_prop] node `n2`"), "{text}");
        let last = format!("Fix these with the tools, then call {FINISH} again.");
        assert_eq!(
            text.trim_end().lines().last(),
            Some(last.as_str()),
            "{text}"
        );
        Ok(())
    }
}
