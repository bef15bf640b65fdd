use super::*;

#[test]
fn check_pattern_gives_the_normal_form() {
    assert_eq!(check_pattern(" *.Example.COM. ").unwrap(), "*.example.com");
    assert_eq!(check_pattern("@PyPI").unwrap(), "@pypi");
    assert!(check_pattern("*").is_err());
}

#[test]
fn the_environment_points_every_tool_at_the_proxy() {
    let env = environment("127.0.0.1:4321".parse().unwrap());
    let get = |n: &str| {
        env.iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{n} is not set"))
    };
    for n in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "PIP_PROXY",
        "CARGO_HTTP_PROXY",
    ] {
        assert_eq!(get(n), "http://127.0.0.1:4321", "{n}");
    }
    assert_eq!(get("all_proxy"), "socks5h://127.0.0.1:4321");
    assert_eq!(get("ALL_PROXY"), "socks5h://127.0.0.1:4321");
    assert_eq!(get("no_proxy"), "");
    assert_eq!(get("NO_PROXY"), "");
    assert_eq!(get("NODE_USE_ENV_PROXY"), "1");
    // yarn 2+ refuses to start on a YARN_ variable it does not know.
    assert!(env.iter().all(|(k, _)| *k != "YARN_NO_PROXY"));
}
