//! Requests that leave the server for addresses someone else chose, and replies read within a cap.
//!
//! - [`address`]: which IP addresses are public (loopback, private, link-local, metadata,
//!   documentation… are not), with the IPv6 forms that carry an IPv4 address;
//! - [`outbound`]: `TESSERA_OUTBOUND_ALLOW`, the check of an API caller's URL when it is given,
//!   and the client that sends to it (public addresses only, the checked address pinned, no
//!   redirects);
//! - [`body`]: a reply read up to a number of bytes and no further.
//!
//! Nothing here knows asks, notifications or workflows; they decide which URLs come through here
//! (those an API caller wrote) and which are the operator's own, trusted as configured.

pub mod address;
pub mod body;
pub mod outbound;
