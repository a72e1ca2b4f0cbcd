//! Which IP addresses a request to a URL someone else chose may reach: public ones only.
//!
//! [`internal`] says what kind of non-public address an IP is, or `None` for a public one. It
//! knows the IPv4 special-purpose blocks (loopback, RFC 1918, CGNAT, link-local with the cloud
//! metadata address, documentation, benchmarking, multicast, reserved) and reads IPv6 as
//! "global unicast (`2000::/3`) or nothing", minus the special blocks inside it; the IPv6 forms
//! that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
//! `2002::/16`) are judged by the IPv4 address they carry, so `::ffff:127.0.0.1` is loopback.
//! It does no I/O and knows nothing of allowlists: `net::outbound` decides what to do with it.

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr},
};

/// The AWS, GCP and Azure instance metadata service (also reachable as link-local).
const METADATA_V4: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);
/// AWS's IPv6 instance metadata service (also a unique local address).
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// Why an address is not public.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Internal {
    /// `0.0.0.0/8`, `::`: "this host", which connects to the local machine.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), IPv6 unique local (`fc00::/7`) and
    /// site-local (`fec0::/10`).
    Private,
    /// `100.64.0.0/10`, carrier-grade NAT.
    Shared,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `169.254.169.254`, `fd00:ec2::254`: a cloud instance's metadata service.
    Metadata,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`.
    Benchmarking,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// Every other special-purpose block: `192.0.0/24`, `192.88.99/24`, `240/4` with the
    /// broadcast address, IPv6 outside `2000::/3` (IPv4-compatible, discard-only, local NAT64…)
    /// and `2001::/23` (Teredo, ORCHID, benchmarking…).
    Reserved,
}

impl fmt::Display for Internal {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Unspecified => "an unspecified address",
            Self::Loopback => "a loopback address",
            Self::Private => "a private address",
            Self::Shared => "a shared (carrier-grade NAT) address",
            Self::LinkLocal => "a link-local address",
            Self::Metadata => "a cloud metadata address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
            Self::Multicast => "a multicast address",
            Self::Reserved => "a reserved address",
        })
    }
}

/// What kind of non-public address `ip` is; `None` when it is public.
#[must_use]
pub fn internal(ip: IpAddr) -> Option<Internal> {
    match ip {
        IpAddr::V4(ip) => internal_v4(ip),
        IpAddr::V6(ip) => internal_v6(ip),
    }
}

fn internal_v4(ip: Ipv4Addr) -> Option<Internal> {
    if ip == METADATA_V4 {
        return Some(Internal::Metadata);
    }
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => Internal::Unspecified,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => Internal::Private,
        (100, 64..=127, _) => Internal::Shared,
        (127, _, _) => Internal::Loopback,
        (169, 254, _) => Internal::LinkLocal,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Internal::Documentation,
        (198, 18 | 19, _) => Internal::Benchmarking,
        (224..=239, _, _) => Internal::Multicast,
        (192, 0, 0) | (192, 88, 99) | (240..=255, _, _) => Internal::Reserved,
        _ => return None,
    })
}

fn internal_v6(ip: Ipv6Addr) -> Option<Internal> {
    if ip == METADATA_V6 {
        return Some(Internal::Metadata);
    }
    if ip.is_unspecified() {
        return Some(Internal::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Internal::Loopback);
    }
    if let Some(carried) = ip.to_ipv4_mapped() {
        return internal_v4(carried);
    }
    let segments = ip.segments();
    let carried = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    // NAT64's well-known prefix: the IPv4 address is the last 32 bits.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return internal_v4(carried(segments[6], segments[7]));
    }
    // 6to4: the IPv4 address follows the 16-bit prefix.
    if segments[0] == 0x2002 {
        return internal_v4(carried(segments[1], segments[2]));
    }
    Some(match segments[0] {
        0xff00..=0xffff => Internal::Multicast,
        0xfe80..=0xfebf => Internal::LinkLocal,
        0xfc00..=0xfdff | 0xfec0..=0xfeff => Internal::Private,
        0x2001 if segments[1] == 0x0db8 => Internal::Documentation,
        0x3fff if segments[1] < 0x1000 => Internal::Documentation,
        0x2001 if segments[1] < 0x0200 => Internal::Reserved,
        first if first & 0xe000 != 0x2000 => Internal::Reserved,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(raw: &str) -> Option<Internal> {
        raw.parse::<IpAddr>().ok().and_then(internal)
    }

    #[test]
    fn public_addresses_pass() {
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:830::200e",
            // 6to4 and NAT64 forms of a public address are as public as it is.
            "2002:0808:0808::1",
            "64:ff9b::808:808",
        ] {
            assert_eq!(kind(public), None, "{public}");
        }
    }

    #[test]
    fn internal_addresses_are_named_by_kind() {
        for (address, expected) in [
            ("127.0.0.1", Internal::Loopback),
            ("127.255.0.9", Internal::Loopback),
            ("::1", Internal::Loopback),
            ("0.0.0.0", Internal::Unspecified),
            ("::", Internal::Unspecified),
            ("10.1.2.3", Internal::Private),
            ("172.16.0.1", Internal::Private),
            ("192.168.1.1", Internal::Private),
            ("fd12:3456::1", Internal::Private),
            ("fec0::1", Internal::Private),
            ("100.64.0.1", Internal::Shared),
            ("169.254.10.1", Internal::LinkLocal),
            ("fe80::1", Internal::LinkLocal),
            ("169.254.169.254", Internal::Metadata),
            ("fd00:ec2::254", Internal::Metadata),
            ("192.0.2.1", Internal::Documentation),
            ("198.51.100.7", Internal::Documentation),
            ("203.0.113.9", Internal::Documentation),
            ("2001:db8::1", Internal::Documentation),
            ("3fff::1", Internal::Documentation),
            ("198.18.0.1", Internal::Benchmarking),
            ("224.0.0.1", Internal::Multicast),
            ("ff02::1", Internal::Multicast),
            ("255.255.255.255", Internal::Reserved),
            ("240.0.0.1", Internal::Reserved),
            ("192.0.0.8", Internal::Reserved),
            ("2001::1", Internal::Reserved),
            ("100::1", Internal::Reserved),
            ("::127.0.0.1", Internal::Reserved),
        ] {
            assert_eq!(kind(address), Some(expected), "{address}");
        }
    }

    #[test]
    fn ipv6_forms_of_an_internal_ipv4_address_are_that_address() {
        for (address, expected) in [
            ("::ffff:127.0.0.1", Internal::Loopback),
            ("::ffff:169.254.169.254", Internal::Metadata),
            ("64:ff9b::a00:1", Internal::Private),
            ("64:ff9b::7f00:1", Internal::Loopback),
            ("2002:7f00:0001::1", Internal::Loopback),
            ("2002:a9fe:a9fe::", Internal::Metadata),
        ] {
            assert_eq!(kind(address), Some(expected), "{address}");
        }
    }
}
