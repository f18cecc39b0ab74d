//! The CBOR codec against RFC 8949's examples and Kubernetes' encodings, its refusals, round
//! trips of generated values, and a seeded fuzzing of the decoder.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;
use serde_json::json;

use super::decode::MAX_TAGS;
use super::*;
use crate::limits::MAX_NESTING_DEPTH;

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// `value` encoded, without the self-described prefix.
fn bare(value: &Value) -> Vec<u8> {
    let encoded = encode(value);
    assert_eq!(encoded[..3], SELF_DESCRIBED);
    encoded[3..].to_vec()
}

fn error(body: &[u8]) -> CborError {
    decode(body).expect_err("refused")
}

// R-RES-127
#[test]
fn objects_encode_as_kubernetes_writes_them() {
    // Keys and strings are byte strings; keys ordered by their encodings (shorter first).
    let object = json!({"apiVersion": "v", "kind": "k", "metadata": {"name": "foo"}});
    let mut want = SELF_DESCRIBED.to_vec();
    want.extend_from_slice(b"\xa3\x44kind\x41k\x48metadata\xa1\x44name\x43foo\x4aapiVersion\x41v");
    assert_eq!(encode(&object), want);
    assert_eq!(decode(&want).unwrap(), object);
    // A key of 24 bytes or more has a two-byte head, so it sorts after every shorter key
    // whatever its bytes.
    let long = "a".repeat(24);
    let encoded = bare(&json!({&long: 1, "zz": 2}));
    assert_eq!(encoded[..4], *b"\xa2\x42zz");
}

#[test]
fn numbers_take_their_shortest_form() {
    let cases = [
        (json!(0), "00"),
        (json!(23), "17"),
        (json!(24), "1818"),
        (json!(1000), "1903e8"),
        (json!(1_000_000), "1a000f4240"),
        (json!(1_000_000_000_000_i64), "1b000000e8d4a51000"),
        (json!(u64::MAX), "1bffffffffffffffff"),
        (json!(-1), "20"),
        (json!(-1000), "3903e7"),
        (json!(i64::MIN), "3b7fffffffffffffff"),
        (json!(0.0), "f90000"),
        (json!(-0.0), "f98000"),
        (json!(1.5), "f93e00"),
        (json!(65504.0), "f97bff"),
        (json!(5.960_464_477_539_063e-8), "f90001"),
        (json!(6.103_515_625e-5), "f90400"),
        (json!(100_000.0), "fa47c35000"),
        (json!(3.402_823_466_385_288_6e38), "fa7f7fffff"),
        (json!(1.1), "fb3ff199999999999a"),
        (json!(1.0e300), "fb7e37e43c8800759c"),
        (json!(-4.1), "fbc010666666666666"),
    ];
    for (value, want) in cases {
        assert_eq!(bare(&value), hex(want), "{value}");
    }
}

#[test]
fn decodes_rfc_8949_examples() {
    let cases = [
        ("00", json!(0)),
        ("3903e7", json!(-1000)),
        ("f93c00", json!(1.0)),
        ("f9c400", json!(-4.0)),
        ("fa47c35000", json!(100_000.0)),
        ("fb3ff199999999999a", json!(1.1)),
        ("f4", json!(false)),
        ("f5", json!(true)),
        ("f6", Value::Null),
        ("60", json!("")),
        ("6449455446", json!("IETF")),
        ("62225c", json!("\"\\")),
        ("62c3bc", json!("\u{fc}")),
        ("64f0908591", json!("\u{10151}")),
        ("4401020304", json!("\u{1}\u{2}\u{3}\u{4}")),
        ("83010203", json!([1, 2, 3])),
        ("8301820203820405", json!([1, [2, 3], [4, 5]])),
        ("a26161016162820203", json!({"a": 1, "b": [2, 3]})),
        ("826161a161626163", json!(["a", {"b": "c"}])),
        ("5f42010243030405ff", json!("\u{1}\u{2}\u{3}\u{4}\u{5}")),
        ("7f657374726561646d696e67ff", json!("streaming")),
        ("9fff", json!([])),
        ("9f018202039f0405ffff", json!([1, [2, 3], [4, 5]])),
        ("bf61610161629f0203ffff", json!({"a": 1, "b": [2, 3]})),
        ("bf6346756ef563416d7421ff", json!({"Fun": true, "Amt": -2})),
        (
            "c074323031332d30332d32315432303a30343a30305a",
            json!("2013-03-21T20:04:00Z"),
        ),
        ("c11a514b67b0", json!("2013-03-21T20:04:00Z")),
        ("c1fb41d452d9ec200000", json!("2013-03-21T20:04:00.5Z")),
        ("d74401020304", json!("01020304")),
        ("d818456449455446", json!("dIETF")),
        (
            "d82076687474703a2f2f7777772e6578616d706c652e636f6d",
            json!("http://www.example.com"),
        ),
    ];
    for (input, want) in cases {
        assert_eq!(decode(&hex(input)).unwrap(), want, "{input}");
    }
}

#[test]
fn tags_are_read_as_kubernetes_reads_them() {
    // The self-described tag is optional and transparent.
    assert_eq!(decode(&hex("d9d9f7a1416101")).unwrap(), json!({"a": 1}));
    // Expected later encodings of byte strings: base64url, base64, base16.
    assert_eq!(decode(&hex("d54401020304")).unwrap(), json!("AQIDBA"));
    assert_eq!(decode(&hex("d64401020304")).unwrap(), json!("AQIDBA=="));
    // Times as RFC 3339 text with nanoseconds.
    assert_eq!(
        decode(&hex("c1f93c00")).unwrap(),
        json!("1970-01-01T00:00:01Z")
    );
    assert_eq!(decode(&hex("c120")).unwrap(), json!("1969-12-31T23:59:59Z"));
    assert_eq!(
        error(&hex("c11b0000003afff44181")),
        CborError::TimeOutOfRange
    );
    assert_eq!(
        error(&hex("c054323030362d30312d30325431353a30343a30355a")),
        CborError::TagContent {
            tag: 0,
            expected: "text string",
            got: MajorType::ByteString
        }
    );
    assert!(matches!(
        error(&hex("c06474657874")),
        CborError::NotRfc3339 { .. }
    ));
    // Bignums are refused; other tags give their content.
    let bignum = error(&hex("c249010000000000000000"));
    assert_eq!(
        bignum.to_string(),
        "cbor: data item of cbor type tag is not accepted by protocol: bignum"
    );
    assert_eq!(decode(&hex("c48221196ab3")).unwrap(), json!([-2, 27315]));
    // A chain of tags is bounded without recursion.
    let mut chain = SELF_DESCRIBED.repeat(MAX_TAGS);
    chain.push(0x01);
    assert_eq!(decode(&chain).unwrap(), json!(1));
    chain.splice(0..0, [0xc6]);
    assert_eq!(error(&chain), CborError::TooManyTags);
}

// R-RES-127
#[test]
fn duplicate_and_non_string_keys_are_refused() {
    let duplicate = error(&hex("a2614101614102"));
    assert_eq!(
        duplicate.to_string(),
        r#"cbor: found duplicate map key "A" at map element index 1"#
    );
    // A byte string key and a text string key with the same bytes are the same key.
    assert_eq!(
        error(&hex("a2414101614102")),
        CborError::DuplicateKey {
            key: "A".into(),
            index: 1
        }
    );
    // Nested, and in an indefinite-length map.
    assert!(matches!(
        error(&hex("a1616ebf616101616102ff")),
        CborError::DuplicateKey { .. }
    ));
    assert_eq!(
        error(&hex("a1fb40091eb851eb851f63706965")).to_string(),
        "cbor: cannot unmarshal primitives into Go value of type string"
    );
    assert_eq!(
        error(&hex("a1016161")),
        CborError::NonStringKey(MajorType::PositiveInteger)
    );
    assert_eq!(
        error(&hex("a1800102")),
        CborError::NonStringKey(MajorType::Array)
    );
}

#[test]
fn values_without_a_json_form_are_refused() {
    for (input, what) in [
        ("f97e00", Unacceptable::NaN),
        ("fa7fc00000", Unacceptable::NaN),
        ("f97c00", Unacceptable::Infinity),
        ("fbfff0000000000000", Unacceptable::Infinity),
        ("f7", Unacceptable::SimpleValue(23)),
        ("e0", Unacceptable::SimpleValue(0)),
        ("f820", Unacceptable::SimpleValue(32)),
        ("f8ff", Unacceptable::SimpleValue(255)),
    ] {
        assert_eq!(
            error(&hex(input)),
            CborError::Unacceptable {
                major: MajorType::Primitives,
                what
            },
            "{input}"
        );
    }
    assert_eq!(error(&hex("f818")), CborError::ReservedSimpleValue(24));
    assert_eq!(
        error(&hex("1bffffffffffffffff")).to_string(),
        "cbor: cannot unmarshal positive integer into Go value of type int64 \
         (18446744073709551615 overflows Go's int64)"
    );
    assert_eq!(
        error(&hex("3bffffffffffffffff")).to_string(),
        "cbor: cannot unmarshal negative integer into Go value of type int64 \
         (-18446744073709551616 overflows Go's int64)"
    );
    assert_eq!(error(&hex("62c328")), CborError::InvalidUtf8);
}

#[test]
fn malformed_input_is_refused() {
    assert_eq!(error(b""), CborError::Empty);
    for truncated in [
        "18",
        "62c3",
        "5a00010000",
        "9b00ffffffffffffff",
        "bf6161",
        "5f41",
    ] {
        assert_eq!(
            error(&hex(truncated)),
            CborError::UnexpectedEof,
            "{truncated}"
        );
    }
    assert_eq!(
        error(&hex("1c")).to_string(),
        "cbor: invalid additional information 28 for type positive integer"
    );
    assert_eq!(
        error(&hex("1f")),
        CborError::InvalidAdditionalInfo {
            info: 31,
            major: MajorType::PositiveInteger
        }
    );
    assert_eq!(
        error(&hex("df")),
        CborError::InvalidAdditionalInfo {
            info: 31,
            major: MajorType::Tag
        }
    );
    assert_eq!(error(&hex("ff")), CborError::UnexpectedBreak);
    assert_eq!(error(&hex("8201ff")), CborError::UnexpectedBreak);
    assert_eq!(
        error(&hex("5f01ff")),
        CborError::WrongChunk {
            chunk: MajorType::PositiveInteger,
            string: MajorType::ByteString
        }
    );
    assert_eq!(
        error(&hex("7f5f40ffff")).to_string(),
        "cbor: wrong element type byte string for indefinite-length UTF-8 text string"
    );
    assert_eq!(
        error(&hex("010203")),
        CborError::Extraneous { count: 2, index: 1 }
    );
}

#[test]
fn nesting_is_bounded_like_json() {
    let nested = |depth: usize| {
        let mut body = vec![0x81; depth];
        body.push(0x80);
        body
    };
    assert!(decode(&nested(MAX_NESTING_DEPTH - 1)).is_ok());
    assert_eq!(error(&nested(MAX_NESTING_DEPTH)), CborError::TooDeep);
    // Far past the limit, in maps: refused without exhausting the stack.
    let maps: Vec<u8> = [0xa1, 0x41, b'a'].repeat(100_000);
    assert_eq!(error(&maps), CborError::TooDeep);
}

#[test]
fn declared_lengths_do_not_allocate_beyond_the_input() {
    // Counts of 2^64 - 1 items or bytes, with nothing behind them.
    for input in [
        "9bffffffffffffffff",
        "bbffffffffffffffff",
        "5bffffffffffffffff",
    ] {
        assert_eq!(error(&hex(input)), CborError::UnexpectedEof, "{input}");
    }
}

// R-RES-128
#[test]
fn watch_events_embed_the_tagged_object() {
    let object = encode(&json!({"kind": "Pod"}));
    let event = encode_watch_event("ADDED", &object);
    let mut want = hex("d9d9f7 a2 4474797065 454144444544 466f626a656374");
    want.extend_from_slice(&object);
    assert_eq!(event, want);
    assert_eq!(
        decode(&event).unwrap(),
        json!({"type": "ADDED", "object": {"kind": "Pod"}})
    );
}

#[test]
fn json_transcodes_both_ways() {
    let text = br#"{"kind":"ConfigMap","data":{"a":"b"},"n":[1,-2,0.5,null,true]}"#;
    let encoded = encode_json(text).unwrap();
    let back: Value = serde_json::from_slice(&decode_to_json(&encoded).unwrap()).unwrap();
    assert_eq!(back, serde_json::from_slice::<Value>(text).unwrap());
    assert!(encode_json(b"{").is_err());
}

/// A random JSON value: objects and arrays up to `depth` deep, integers across int64,
/// floats of every width, strings with multi-byte characters.
fn random_value(rng: &mut StdRng, depth: usize) -> Value {
    let leaf = depth == 0 || rng.random_ratio(1, 3);
    match rng.random_range(0..if leaf { 6 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => json!(rng.random::<i64>() >> rng.random_range(0..64)),
        3 => {
            let float = match rng.random_range(0..3) {
                0 => f64::from(rng.random_range(-2048..2048)) / 8.0,
                1 => f64::from(rng.random::<f32>()),
                _ => rng.random::<f64>() * 1e12,
            };
            json!(float)
        }
        4 | 5 => Value::String(random_text(rng)),
        6 => Value::Array(
            (0..rng.random_range(0..5))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.random_range(0..5))
                .map(|_| (random_text(rng), random_value(rng, depth - 1)))
                .collect(),
        ),
    }
}

fn random_text(rng: &mut StdRng) -> String {
    const ALPHABET: &[char] = &[
        'a',
        'Z',
        '0',
        '-',
        '.',
        '/',
        ' ',
        '"',
        '\u{e9}',
        '\u{4e2d}',
        '\u{1f600}',
    ];
    let length = rng.random_range(0..30);
    (0..length)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
        .collect()
}

#[test]
fn generated_values_round_trip() {
    let mut rng = StdRng::seed_from_u64(16);
    for _ in 0..2000 {
        let value = random_value(&mut rng, 6);
        let encoded = encode(&value);
        assert_eq!(decode(&encoded).unwrap(), value);
        // Equal values, equal bytes: encoding is deterministic.
        assert_eq!(encode(&decode(&encoded).unwrap()), encoded);
    }
}

/// The decoder fed random bytes and mutations of valid encodings: it never panics, an
/// accepted body re-encodes to a body that decodes to the same value, and a refusal is a
/// short message naming the problem.
#[test]
fn fuzzed_inputs_are_decoded_or_refused() {
    let mut rng = StdRng::seed_from_u64(0xcb0e);
    let mut accepted = 0;
    for round in 0..20_000 {
        let body = if round % 4 == 0 {
            let length = rng.random_range(0..64);
            (0..length).map(|_| rng.random::<u8>()).collect()
        } else {
            let mut body = encode(&random_value(&mut rng, 4));
            for _ in 0..rng.random_range(1..4) {
                mutate(&mut rng, &mut body);
            }
            body
        };
        match decode(&body) {
            Ok(value) => {
                accepted += 1;
                assert_eq!(decode(&encode(&value)).unwrap(), value);
            }
            Err(e) => {
                let message = e.to_string();
                assert!(!message.is_empty() && message.len() < 512, "{message}");
            }
        }
    }
    // The mutations are small enough that some bodies stay valid.
    assert!(accepted > 100, "{accepted}");
}

fn mutate(rng: &mut StdRng, body: &mut Vec<u8>) {
    if body.is_empty() {
        body.push(rng.random());
        return;
    }
    let at = rng.random_range(0..body.len());
    match rng.random_range(0..5) {
        0 => body[at] = rng.random(),
        1 => body[at] ^= 1 << rng.random_range(0..8),
        2 => body.truncate(at),
        3 => body.insert(at, rng.random()),
        _ => {
            let end = rng.random_range(at..=body.len());
            let copy = body[at..end].to_vec();
            body.splice(at..at, copy);
        }
    }
}
