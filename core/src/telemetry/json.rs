//! `TESSERA_LOG_FORMAT=json`: one JSON object per line for a log shipper, with the same events,
//! filter and scrubbing as the text format (the request span already holds `/p/:token`, never
//! the token — `http::logged_path`).
//!
//! A line is flat: `time`, `level`, `target`, `message`, then the fields of every enclosing span
//! from the outermost in (so a request's lines carry its `request.id`), then the event's own
//! fields; an inner name wins over an outer one.

use std::{fmt, io::Write as _};

use serde_json::{Map, Value};
use tracing::{
    field::{Field, Visit},
    span, Event, Subscriber,
};
use tracing_subscriber::{
    fmt::{
        format::Writer,
        time::{FormatTime as _, SystemTime},
        MakeWriter,
    },
    layer::Context,
    registry::LookupSpan,
    Layer,
};

/// The layer that writes each event as one JSON line to `make_writer`.
pub struct JsonLayer<W> {
    make_writer: W,
}

impl<W> JsonLayer<W> {
    /// Writes to whatever `make_writer` makes (stdout for the server, a buffer in tests).
    pub const fn new(make_writer: W) -> Self {
        Self { make_writer }
    }
}

/// A span's fields as recorded so far, kept in the span's extensions.
struct SpanFields(Map<String, Value>);

/// Records fields into a JSON map, numbers and booleans as themselves.
struct Collect<'a>(&'a mut Map<String, Value>);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().to_owned(), Value::String(value.to_owned()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().to_owned(), Value::String(value.to_string()));
    }
}

impl<S, W> Layer<S> for JsonLayer<W>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
    W: for<'writer> MakeWriter<'writer> + 'static,
{
    fn on_new_span(
        &self,
        attributes: &span::Attributes<'_>,
        id: &span::Id,
        context: Context<'_, S>,
    ) {
        let Some(span) = context.span(id) else {
            return;
        };
        let mut fields = Map::new();
        attributes.record(&mut Collect(&mut fields));
        span.extensions_mut().insert(SpanFields(fields));
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, context: Context<'_, S>) {
        let Some(span) = context.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(SpanFields(fields)) = extensions.get_mut::<SpanFields>() {
            values.record(&mut Collect(fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, context: Context<'_, S>) {
        let metadata = event.metadata();
        let mut own = Map::new();
        event.record(&mut Collect(&mut own));
        let mut line = Map::new();
        let mut time = String::new();
        if SystemTime.format_time(&mut Writer::new(&mut time)).is_ok() {
            line.insert("time".to_owned(), Value::String(time));
        }
        line.insert("level".to_owned(), Value::from(metadata.level().as_str()));
        line.insert("target".to_owned(), Value::from(metadata.target()));
        line.insert(
            "message".to_owned(),
            own.remove("message")
                .unwrap_or(Value::String(String::new())),
        );
        if let Some(scope) = context.event_scope(event) {
            for span in scope.from_root() {
                let extensions = span.extensions();
                if let Some(SpanFields(fields)) = extensions.get::<SpanFields>() {
                    line.extend(
                        fields
                            .iter()
                            .map(|(name, value)| (name.clone(), value.clone())),
                    );
                }
            }
        }
        line.extend(own);
        let Ok(mut bytes) = serde_json::to_vec(&Value::Object(line)) else {
            return;
        };
        bytes.push(b'\n');
        // A log line that cannot be written has nowhere to be reported.
        let _ = self.make_writer.make_writer_for(metadata).write_all(&bytes);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::Value;
    use tracing_subscriber::{fmt::MakeWriter, layer::SubscriberExt as _};

    use super::JsonLayer;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl MakeWriter<'_> for Buffer {
        type Writer = Self;

        fn make_writer(&self) -> Self {
            self.clone()
        }
    }

    #[test]
    fn an_event_is_one_line_with_its_spans_fields() -> anyhow::Result<()> {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::registry().with(JsonLayer::new(buffer.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let span =
                tracing::info_span!("request", request.id = "req-1", http.path = "/p/:token");
            let _entered = span.enter();
            tracing::warn!(run.id = 7, "step \"failed\"\nretrying");
        });
        let text = String::from_utf8(
            buffer
                .0
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?
                .clone(),
        )?;
        assert_eq!(text.lines().count(), 1, "{text}");
        let line: Value = serde_json::from_str(text.trim_end())?;
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["message"], "step \"failed\"\nretrying");
        assert_eq!(line["request.id"], "req-1");
        assert_eq!(line["http.path"], "/p/:token");
        assert_eq!(line["run.id"], 7);
        assert!(
            line["time"].as_str().is_some_and(|time| time.len() >= 20),
            "{line}"
        );
        assert!(
            line["target"]
                .as_str()
                .is_some_and(|target| target.contains("json")),
            "{line}"
        );
        Ok(())
    }
}
