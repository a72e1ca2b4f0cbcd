//! "Every field type": a page with one field of each kind the form subset allows, and its schema.
//!
//! Served at `/components/try` so a person (and the browser tests) can fill it in and see the JSON
//! the mechanical decoder produces.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

/// The page data: rows for the selectable table.
#[must_use]
pub fn data() -> Value {
    json!({
        "invoices": [
            {"id": "inv-1", "customer": "Acme", "total": "€120.00"},
            {"id": "inv-2", "customer": "Globex", "total": "€75.50"},
            {"id": "inv-3", "customer": "Initech", "total": "€310.00"}
        ]
    })
}

/// The response schema, as JSON Schema (loaded through the subset check like any data workflow).
#[must_use]
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "full_name": {"type": "string", "minLength": 2, "title": "Full name"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 18, "maximum": 120},
            "budget": {"type": "number", "minimum": 0, "multipleOf": 0.01},
            "website": {"type": "string", "format": "uri"},
            "start_date": {"type": "string", "format": "date"},
            "passphrase": {"type": "string", "minLength": 8},
            "bio": {"type": "string", "maxLength": 500},
            "subscribe": {"type": "boolean"},
            "plan": {"type": "string", "enum": ["free", "pro", "team"]},
            "country": {"type": "string", "enum": ["de", "fr", "it", "nl", "pl", "es"]},
            "topics": {"type": "array", "items": {"type": "string", "enum": ["billing", "product", "security"]}},
            "languages": {"type": "array", "items": {"type": "string", "enum": ["en", "de", "fr"]}},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "invoices": {"type": "array", "items": {"type": "string"}, "minItems": 1}
        },
        "required": ["full_name", "email", "age", "start_date", "plan", "country", "invoices"]
    })
}

/// The page tree: a heading, then one Form holding every field and the buttons.
///
/// # Errors
/// Never in practice: the tree is a constant; the `Result` keeps a typo from becoming a panic.
pub fn tree() -> Result<PageTree, serde_json::Error> {
    let options = |pairs: &[(&str, &str)]| -> Value {
        pairs
            .iter()
            .map(|(value, label)| json!({"value": value, "label": label}))
            .collect()
    };
    serde_json::from_value(json!({
        "nodes": {
            "title": {"component": "Heading", "props": {"text": "Every field type", "level": 1}},
            "intro": {"component": "Text", "props": {"text": "Fill this in and submit: the page shows the JSON the decoder produced."}},
            "form": {"component": "Form", "props": {"title": "Your details"}, "children": [
                "full_name", "email", "age", "budget", "website", "start_date", "passphrase", "bio",
                "subscribe", "plan", "country", "topics", "languages", "aliases", "invoices", "buttons"
            ]},
            "full_name": {"component": "Input", "props": {"name": "full_name", "label": "Full name", "required": true, "minLength": 2}},
            "email": {"component": "Input", "props": {"name": "email", "label": "Email", "type": "email", "required": true, "help": "We only use it to reply."}},
            "age": {"component": "Input", "props": {"name": "age", "label": "Age", "type": "number", "required": true, "min": 18, "max": 120, "step": 1}},
            "budget": {"component": "Input", "props": {"name": "budget", "label": "Budget (EUR)", "type": "number", "min": 0, "step": 0.01}},
            "website": {"component": "Input", "props": {"name": "website", "label": "Website", "type": "url", "placeholder": "https://example.com"}},
            "start_date": {"component": "Input", "props": {"name": "start_date", "label": "Start date", "type": "date", "required": true}},
            "passphrase": {"component": "Input", "props": {"name": "passphrase", "label": "Passphrase", "type": "password", "minLength": 8, "help": "At least 8 characters."}},
            "bio": {"component": "TextArea", "props": {"name": "bio", "label": "Short bio", "rows": 3, "help": "Up to 500 characters."}},
            "subscribe": {"component": "Checkbox", "props": {"name": "subscribe", "label": "Send me the monthly newsletter"}},
            "plan": {"component": "RadioGroup", "props": {"name": "plan", "label": "Plan", "required": true,
                "options": options(&[("free", "Free"), ("pro", "Pro"), ("team", "Team")])}},
            "country": {"component": "Select", "props": {"name": "country", "label": "Country", "required": true,
                "options": options(&[("de", "Germany"), ("fr", "France"), ("it", "Italy"), ("nl", "Netherlands"), ("pl", "Poland"), ("es", "Spain")])}},
            "topics": {"component": "CheckboxGroup", "props": {"name": "topics", "label": "Topics",
                "options": options(&[("billing", "Billing"), ("product", "Product"), ("security", "Security")])}},
            "languages": {"component": "Select", "props": {"name": "languages", "label": "Languages", "multiple": true,
                "options": options(&[("en", "English"), ("de", "German"), ("fr", "French")])}},
            "aliases": {"component": "MultiTextInput", "props": {"name": "aliases", "label": "Other names", "rows": 2}},
            "invoices": {"component": "Table", "props": {"caption": "Open invoices", "rows": {"$data": "/invoices"},
                "columns": [{"key": "customer", "label": "Customer"}, {"key": "total", "label": "Total"}],
                "selectable": {"name": "invoices", "idKey": "id", "label": "Invoices to pay", "required": true}}},
            "buttons": {"component": "Container", "props": {"direction": "row", "gap": "md"}, "children": ["submit", "cancel"]},
            "submit": {"component": "Button", "props": {"label": "Submit", "variant": "primary", "kind": "submit"}},
            "cancel": {"component": "Button", "props": {"label": "Cancel", "variant": "secondary", "kind": "cancel"}}
        },
        "order": ["title", "intro", "form"]
    }))
}
