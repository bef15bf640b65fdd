use super::*;

fn spec(network: Network) -> Spec {
    Spec {
        write: vec![],
        deny_read: vec![],
        hidden_kinds: Vec::new(),
        deny_write: vec![],
        unprotected: vec![],
        terminals: vec![],
        network,
        proxy: None,
        unix_sockets: false,
        best_effort: false,
        require: Vec::new(),
        unwalkable: None,
    }
}

fn kernel(abi: i32, seccomp: bool) -> Kernel {
    Kernel {
        landlock_abi: abi,
        seccomp,
        user_notify: seccomp,
    }
}

#[test]
fn tcp_rules_are_needed_only_for_allowed_ports() {
    assert!(!required(&spec(Network::Off)).contains(&Feature::TcpRules));
    assert!(!required(&spec(Network::On)).contains(&Feature::TcpRules));
    let ports = Network::Tcp {
        connect: vec![443],
        bind: vec![],
    };
    assert!(required(&spec(ports)).contains(&Feature::TcpRules));
}

#[test]
fn a_kernel_with_abi_6_and_seccomp_lacks_nothing() {
    let ports = spec(Network::Tcp {
        connect: vec![1],
        bind: vec![],
    });
    assert!(missing(&required(&ports), &kernel(6, true)).is_empty());
    assert!(missing(&required(&ports), &kernel(7, true)).is_empty());
}

#[test]
fn a_domain_list_is_never_best_effort() {
    let mut proxied = spec(Network::Tcp {
        connect: vec![],
        bind: vec![],
    });
    proxied.proxy = Some(Domains {
        allow: vec!["example.org".into()],
        deny: vec![],
        resolve: vec![],
    });
    proxied.best_effort = true;
    let needs = required(&proxied);
    assert!(needs.contains(&Feature::UserNotify));
    assert!(needs.contains(&Feature::TcpRules));
    let lacks = |spec: &Spec, kernel: &Kernel| proxy_lacks(spec, kernel, &missing(&needs, kernel));
    assert_eq!(lacks(&proxied, &kernel(6, true)), None);
    // Before ABI 4 the supervisor decides in place of the TCP rules...
    assert_eq!(lacks(&proxied, &kernel(3, true)), None);
    assert!(
        grade(&proxied, &kernel(3, true))
            .unwrap()
            .residual
            .contains(&Feature::TcpRules)
    );
    // ...but not with Unix sockets (the descriptor could change under it).
    proxied.unix_sockets = true;
    assert_eq!(
        lacks(&proxied, &kernel(3, true)),
        Some(vec![Feature::TcpRules])
    );
    let e = crate::explain::sandbox_not_run(&grade(&proxied, &kernel(3, true)).unwrap_err());
    assert!(
        e.starts_with(
            "a domain list (--allow-domain, sandbox.allow_domains) with Unix sockets \
                 allowed (--unix-sockets) needs Landlock TCP port rules (ABI 4), which this \
                 kernel cannot do; nothing was run."
        ),
        "{e}"
    );
    assert_eq!(lacks(&proxied, &kernel(4, true)), None);
    proxied.unix_sockets = false;
    let no_notify = Kernel {
        user_notify: false,
        ..kernel(6, true)
    };
    assert_eq!(lacks(&proxied, &no_notify), Some(vec![Feature::UserNotify]));
    let old_no_notify = Kernel {
        landlock_abi: 3,
        ..no_notify
    };
    assert_eq!(
        lacks(&proxied, &old_no_notify),
        Some(vec![Feature::UserNotify, Feature::TcpRules])
    );
    // Without a domain list, nothing here is refused.
    proxied.proxy = None;
    assert_eq!(lacks(&proxied, &no_notify), None);
}

#[test]
fn before_abi_4_the_supervisor_decides_ports_in_place_of_landlock() {
    let mut ports = spec(Network::Tcp {
        connect: vec![443],
        bind: vec![8080],
    });
    let old = kernel(2, true);
    assert!(supervisor_decides_tcp(&ports, &old));
    let graded = grade(&ports, &old).unwrap();
    assert!(graded.residual.contains(&Feature::TcpRules));
    assert!(graded.not_enforced.is_empty());
    let notified = Notified::of(&ports, &old, false);
    assert!(notified.tcp && notified.connect && notified.listen && !notified.exec);
    // From ABI 4, Landlock does; the supervisor still takes listen().
    assert!(!supervisor_decides_tcp(&ports, &kernel(4, true)));
    let notified = Notified::of(&ports, &kernel(4, true), false);
    assert!(!notified.tcp && !notified.connect && notified.listen);
    // No ports, no TCP to decide.
    assert!(!supervisor_decides_tcp(&spec(Network::Off), &old));
    assert!(!supervisor_decides_tcp(&spec(Network::On), &old));
    // Without user notification, or with Unix sockets, the TCP rules are core again.
    let no_notify = Kernel {
        user_notify: false,
        ..old
    };
    assert!(!supervisor_decides_tcp(&ports, &no_notify));
    assert!(grade(&ports, &no_notify).is_err());
    ports.unix_sockets = true;
    assert!(!supervisor_decides_tcp(&ports, &old));
    let e = grade(&ports, &old).unwrap_err().to_string();
    assert!(e.contains("Landlock TCP port rules (ABI 4)"), "{e}");
    ports.best_effort = true;
    assert_eq!(
        grade(&ports, &old).unwrap().not_enforced,
        vec![Feature::TcpRules]
    );
    // sandbox.require names it like any graded feature.
    ports.unix_sockets = false;
    ports.best_effort = false;
    ports.require = vec![Feature::TcpRules];
    let e = grade(&ports, &old).unwrap_err().to_string();
    assert!(
            e.starts_with("the safe level needs Landlock TCP port rules (ABI 4), which this kernel (Landlock ABI 2) lacks and sandbox.require asks for"),
            "{e}"
        );
}

#[test]
fn older_kernels_lack_the_newer_features() {
    let off = spec(Network::Off);
    assert_eq!(
        missing(&required(&off), &kernel(4, true)),
        vec![Feature::DeviceIoctl, Feature::Scopes]
    );
    assert_eq!(
        missing(&required(&off), &kernel(0, true)),
        vec![
            Feature::Filesystem,
            Feature::Refer,
            Feature::Truncate,
            Feature::DeviceIoctl,
            Feature::Scopes
        ]
    );
    assert_eq!(
        missing(&required(&off), &kernel(6, false)),
        vec![Feature::Seccomp]
    );
}

#[test]
fn below_abi_6_the_core_holds_and_the_rest_is_graded() {
    let off = spec(Network::Off);
    let grade = grade(&off, &kernel(2, true)).unwrap();
    assert_eq!(
        grade.residual,
        vec![Feature::Truncate, Feature::DeviceIoctl, Feature::Scopes]
    );
    assert!(grade.not_enforced.is_empty());
    assert_eq!(grade.residual_lines(false).len(), 3);
    // On a kernel with every feature, nothing is graded.
    assert_eq!(grade_of(&off, 6), Grade::default());
    assert_eq!(grade_of(&off, 7), Grade::default());
}

fn grade_of(spec: &Spec, abi: i32) -> Grade {
    grade(spec, &kernel(abi, true)).unwrap()
}

#[test]
fn sandbox_require_refuses_below_what_it_names_even_with_best_effort() {
    let mut strict = spec(Network::Off);
    strict.require = vec![Feature::Scopes];
    strict.best_effort = true;
    let e = crate::explain::sandbox_not_run(&grade(&strict, &kernel(5, true)).unwrap_err());
    assert!(
        e.starts_with(
            "the safe level needs Landlock signal and abstract socket scoping (ABI 6), \
                 which this kernel (Landlock ABI 5) lacks and sandbox.require asks for; \
                 nothing was run."
        ),
        "{e}"
    );
    assert!(!e.contains("device ioctl"), "{e}");
    assert_eq!(grade_of(&strict, 6), Grade::default());
}

#[test]
fn without_the_core_nothing_runs_unless_best_effort() {
    let mut off = spec(Network::Off);
    let e = grade(&off, &kernel(0, true)).unwrap_err().to_string();
    assert!(
        e.starts_with("the safe level needs Landlock filesystem rules (ABI 1), which"),
        "{e}"
    );
    assert!(grade(&off, &kernel(6, false)).is_err());
    // Ports need TCP rules, or the supervisor in their place: without either the
    // network is not as configured.
    let ports = spec(Network::Tcp {
        connect: vec![443],
        bind: vec![],
    });
    let e = grade(&ports, &kernel(3, false)).unwrap_err().to_string();
    assert!(e.contains("Landlock TCP port rules (ABI 4)"), "{e}");
    off.best_effort = true;
    let grade = grade(&off, &kernel(0, true)).unwrap();
    assert_eq!(grade.not_enforced, vec![Feature::Filesystem]);
    assert_eq!(grade.residual.len(), 4);
}

#[test]
fn every_graded_feature_has_a_key_and_says_what_stays_open() {
    for f in GRADED {
        assert!(!f.is_core());
        assert_eq!(Feature::from_key(f.key().unwrap()), Some(f));
        for unix_sockets in [false, true] {
            let (instead, open) = f.without(unix_sockets);
            assert!(!instead.is_empty() && !open.is_empty());
        }
    }
    assert!(Feature::Filesystem.is_core() && Feature::Seccomp.is_core());
    assert_eq!(Feature::from_key("filesystem"), None);
}
