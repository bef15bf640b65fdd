use super::*;

fn host(h: &str) -> Host {
    Host::parse(h).unwrap()
}
fn policy(allow: &[&str], deny: &[&str]) -> Policy {
    let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    Policy::new(&s(allow), &s(deny)).unwrap()
}

#[test]
fn nothing_listed_is_refused() {
    assert_eq!(
        Policy::default().check(&host("example.com"), 443),
        Verdict::Unlisted
    );
    assert_eq!(
        policy(&["example.com"], &[]).check(&host("example.org"), 443),
        Verdict::Unlisted
    );
}

#[test]
fn an_allow_rule_names_itself() {
    let p = policy(&["*.example.com", "example.com:8443"], &[]);
    assert_eq!(
        p.check(&host("a.example.com"), 443),
        Verdict::Allow("*.example.com".into())
    );
    assert_eq!(
        p.check(&host("example.com"), 8443),
        Verdict::Allow("example.com:8443".into())
    );
    assert_eq!(p.check(&host("example.com"), 443), Verdict::Unlisted);
}

#[test]
fn deny_beats_allow_in_any_order() {
    let p = policy(
        &["*.example.com", "evil.example.com"],
        &["evil.example.com"],
    );
    assert_eq!(
        p.check(&host("evil.example.com"), 443),
        Verdict::Deny("evil.example.com".into())
    );
    assert_eq!(
        p.check(&host("evil.example.com"), 8080),
        Verdict::Deny("evil.example.com".into())
    );
    assert_eq!(
        p.check(&host("good.example.com"), 443),
        Verdict::Allow("*.example.com".into())
    );
    let q = policy(&["example.com:*"], &["example.com:22"]);
    assert_eq!(
        q.check(&host("example.com"), 22),
        Verdict::Deny("example.com:22".into())
    );
    assert_eq!(
        q.check(&host("example.com"), 23),
        Verdict::Allow("example.com:*".into())
    );
}

#[test]
fn a_preset_rule_is_named_by_preset_and_pattern() {
    let p = policy(&["@github"], &[]);
    assert_eq!(
        p.check(&host("api.github.com"), 443),
        Verdict::Allow("@github (*.github.com)".into())
    );
    let d = policy(&["@github"], &["@github"]);
    assert_eq!(
        d.check(&host("github.com"), 22),
        Verdict::Deny("@github (github.com)".into())
    );
}

#[test]
fn a_bad_list_is_an_error() {
    assert!(Policy::new(&["*".into()], &[]).is_err());
    assert!(Policy::new(&[], &["@nope".into()]).is_err());
}

#[test]
fn resolve_entries_are_checked_and_normal() {
    assert_eq!(
        check_resolve("Registry.Test=127.0.0.1").unwrap(),
        "registry.test=127.0.0.1"
    );
    assert_eq!(check_resolve(" a.test = [::1] ").unwrap(), "a.test=::1");
    assert_eq!(
        check_resolve("a.test=::ffff:10.0.0.1").unwrap(),
        "a.test=10.0.0.1"
    );
    assert!(
        check_resolve("a.test")
            .unwrap_err()
            .contains("NAME=ADDRESS")
    );
    assert!(
        check_resolve("a.test=localhost")
            .unwrap_err()
            .contains("not an IP address")
    );
    assert!(
        check_resolve("1.2.3.4=127.0.0.1")
            .unwrap_err()
            .contains("is an address")
    );
    assert!(check_resolve("*.test=127.0.0.1").is_err());
    assert!(check_resolve("a.test:80=127.0.0.1").is_err());
}

#[test]
fn a_mapped_name_has_only_its_addresses() {
    let p = Policy::default()
        .with_resolve(&["a.test=127.0.0.1".into(), "a.test=::1".into()])
        .unwrap();
    assert_eq!(
        p.mapped("a.test"),
        [
            "127.0.0.1".parse::<IpAddr>().unwrap(),
            "::1".parse().unwrap()
        ]
    );
    assert!(p.mapped("b.test").is_empty());
}
