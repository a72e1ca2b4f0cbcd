//! A reply body read up to a cap and no further.
//!
//! A receiver chosen by someone else can answer with a body of any size, slowly. Reading it whole
//! (`Response::text`) would hold all of it in memory; [`read_capped`] stops reading once the cap
//! is reached and drops the rest of the stream, so at most `cap` bytes (plus one chunk in flight)
//! are ever held.

/// What was read of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capped {
    /// The body's first bytes, at most the cap.
    pub bytes: Vec<u8>,
    /// Whether the body ended within the cap; `false` when it was cut off.
    pub complete: bool,
}

impl Capped {
    /// The bytes read, as text (invalid UTF-8 replaced).
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// Reads `response`'s body until it ends or `cap` bytes are read, whichever comes first.
///
/// # Errors
/// The transport error when the body cannot be read.
pub async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<Capped, reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Capped {
                bytes,
                complete: false,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Capped {
        bytes,
        complete: true,
    })
}
