//! The JSON Schema loader (`forms/schema/load.rs`, through `FormSchema::from_json_schema`):
//! arbitrary JSON text must load or be refused with a `SchemaError`, never panic or overflow the
//! stack; and a schema it accepts, written back as its canonical JSON Schema, must load again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera::forms::FormSchema;

fuzz_target!(|text: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(text) else {
        return;
    };
    if let Ok(schema) = FormSchema::from_json_schema(&value) {
        let written = schema.to_json_schema();
        if let Err(error) = FormSchema::from_json_schema(&written) {
            panic!("an accepted schema does not load again: {error}\n{written:#}");
        }
    }
});
