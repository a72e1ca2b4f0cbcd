//! An error and every cause beneath it as one line of text, for messages, logs and stored
//! delivery reasons.
//!
//! Client errors often say only the outermost fact ("error sending request"); the cause that
//! explains it ("connection refused") is a `source()` or two below. Written once here for the
//! model providers, the notifiers and email; callers strip what must not be shown (a URL that
//! may carry a token) before they call it.

use std::error::Error;

/// `error` followed by each of its causes, joined by `": "`.
#[must_use]
pub fn on_one_line(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1
                .as_deref()
                .map(|cause| cause as &(dyn Error + 'static))
        }
    }

    #[test]
    fn every_cause_follows_the_error_on_one_line() {
        let error = Layer(
            "error sending request",
            Some(Box::new(Layer("connection refused", None))),
        );
        assert_eq!(
            on_one_line(&error),
            "error sending request: connection refused"
        );
    }
}
