//! Page link tokens: 192 random bits in the URL, only their hash in the database.

use std::fmt;

use rand::RngCore;
use sha2::{Digest, Sha256};

/// The secret part of a page link. Its `Debug` hides the value.
#[derive(Clone, PartialEq, Eq)]
pub struct PageToken(String);

/// The stored form of a [`PageToken`]: hex SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenHash(pub String);

impl PageToken {
    /// A fresh token with 192 bits of randomness (DESIGN.md §9 asks for at least 128).
    #[must_use]
    pub fn generate() -> Self {
        let mut bytes = [0_u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Self(hex::encode(bytes))
    }

    /// Accepts a token from a URL only if it has the shape we issue, so junk never reaches a query.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == 48
            && text
                .bytes()
                .all(|byte| byte.is_ascii_hexdigit() && !byte.is_ascii_uppercase()))
        .then(|| Self(text.to_owned()))
    }

    /// The token as it appears in the link.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The hash stored in place of the token.
    #[must_use]
    pub fn hash(&self) -> TokenHash {
        TokenHash(hex::encode(Sha256::digest(self.0.as_bytes())))
    }
}

impl fmt::Debug for PageToken {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("PageToken(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_parse_back_and_differ() {
        let first = PageToken::generate();
        let second = PageToken::generate();
        assert_ne!(first, second);
        assert_eq!(PageToken::parse(first.as_str()), Some(first.clone()));
        assert_ne!(first.hash(), second.hash());
        assert_eq!(first.hash().0.len(), 64);
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for junk in [
            "",
            "abc",
            "../../etc/passwd",
            &"Z".repeat(48),
            &"A".repeat(48),
        ] {
            assert_eq!(PageToken::parse(junk), None, "{junk}");
        }
    }
}
