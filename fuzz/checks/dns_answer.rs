//! The proxy's DNS answer reader: `netproxy::dns::parse_answer`, on messages a name
//! server (or someone forging its datagrams) sends.
//!
//! Input: byte 0 chooses the question's type (A or AAAA, by its low bit) and whether
//! the rest is the whole message (high bit set) or, more often, what follows a
//! well-formed header and question (bytes 1 and 2: the flags; byte 3: the number of
//! answer records). The reader may not panic or loop, and answers the same twice. An
//! address it returns is one a record in the message holds (its four or sixteen bytes
//! are there), of the family asked for (a v4-mapped AAAA given as IPv4), and there are
//! no more addresses than answer records. A message with another id, or for another
//! question, is never taken.

use std::net::IpAddr;

use gate::netproxy::dns::{Answer, Malformed, TYPE_A, TYPE_AAAA, build_query, parse_answer};

const ID: u16 = 0x4a7e;
const NAME: &str = "pkgs.example";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

pub fn check(data: &[u8]) {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let qtype = if choice & 1 == 0 { TYPE_A } else { TYPE_AAAA };
    let message = if choice & 0x80 != 0 {
        rest.to_vec()
    } else {
        let mut m = build_query(ID, NAME, qtype).expect("a valid name");
        if let [hi, lo, count, records @ ..] = rest {
            m[2] = *hi;
            m[3] = *lo;
            m[6..8].copy_from_slice(&u16::from(*count).to_be_bytes());
            m.extend_from_slice(records);
        } else {
            m[2] |= 0x80;
        }
        m
    };
    let got = parse_answer(&message, ID, NAME, qtype);
    assert_eq!(
        got,
        parse_answer(&message, ID, NAME, qtype),
        "not deterministic"
    );
    if message.len() >= 2 && u16::from_be_bytes([message[0], message[1]]) != ID {
        assert_eq!(
            got,
            Err(Malformed::NotOurs),
            "an answer with another id was taken"
        );
    }
    let other = parse_answer(&message, ID, "other.example", qtype);
    assert!(
        other.is_err() || choice & 0x80 != 0,
        "an answer to another question was taken: {other:?}"
    );
    let Ok(Answer::Addresses(addresses)) = got else {
        return;
    };
    let records = message
        .get(6..8)
        .map_or(0, |c| usize::from(u16::from_be_bytes([c[0], c[1]])));
    assert!(addresses.len() <= records, "more addresses than records");
    for ip in addresses {
        match (ip, qtype) {
            (IpAddr::V4(v4), TYPE_A) => {
                assert!(contains(&message, &v4.octets()), "{ip} is in no record");
            }
            (IpAddr::V4(v4), TYPE_AAAA) => {
                assert!(
                    contains(&message, &v4.to_ipv6_mapped().octets()),
                    "{ip} is in no record"
                );
            }
            (IpAddr::V6(v6), TYPE_AAAA) => {
                assert!(contains(&message, &v6.octets()), "{ip} is in no record");
            }
            _ => panic!("{ip} answers a question of type {qtype}"),
        }
    }
}
