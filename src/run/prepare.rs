//! Before exec at `safe`, and for deny rules at exec: the sandbox's spec built from the
//! settings, admitted against what the kernel can enforce, and prepared, with gate's
//! supervisor started first when the run needs one. Nothing here is enforced: the caller
//! enforces last, right before exec.

use crate::config::Settings;
use crate::sandbox;
use crate::settings::{protected_files, sandbox_settings};

use super::var;

/// gate's supervisor: started with the sandbox, or, outside it, to start right before
/// exec.
pub(super) enum Deferred {
    Started(crate::supervisor::Supervisor),
    /// With whether the command must run in a user namespace of its own, for the
    /// supervisor to read its memory ([`crate::supervisor::Reading`]).
    Start(crate::supervisor::Execs, bool),
}

/// Whether the supervisor for deny rules at exec, outside the sandbox, could read what
/// the command runs (Yama); checked before the allow record.
pub(super) fn exec_checks_readable() -> Result<bool, String> {
    use crate::supervisor::Reading;
    let root = nix::unistd::geteuid().is_root();
    match crate::supervisor::readable(root) {
        Ok(Reading::Direct) => Ok(false),
        Ok(Reading::OwnUserNamespace) => match sandbox::ending::plan(root) {
            sandbox::ending::Plan::Namespace => Ok(true),
            sandbox::ending::Plan::NotEnded(why) => Err(format!(
                "{}; nothing was run",
                crate::supervisor::unreadable_without_namespace(&why)
            )),
        },
        Err(why) => Err(format!("{why}; nothing was run")),
    }
}

/// Build and prepare the sandbox for a run in the current directory, with gate's
/// supervisor when the run needs one (network by domain, deny rules at exec, ending what
/// the command leaves behind).
pub(super) fn prepare_sandbox(
    settings: &Settings,
    execs: Option<crate::supervisor::Execs>,
) -> Result<Prepared, sandbox::SandboxError> {
    let cwd = std::env::current_dir().map_err(|e| {
        sandbox::SandboxError(format!(
            "cannot find the working directory ({e}); nothing was run"
        ))
    })?;
    crate::agents::agent_workspace(&cwd, &var).map_err(sandbox::SandboxError)?;
    let is_root = nix::unistd::geteuid().is_root();
    let spec = sandbox::spec::build(
        &sandbox_settings(settings),
        &cwd,
        &var,
        is_root,
        &protected_files(settings),
    )?;
    tracing::debug!(?spec, "sandbox");
    let kernel = sandbox::Sandbox::admit(&spec)?;
    let notified = sandbox::Notified::of(&spec, &kernel, execs.is_some());
    // Before Landlock ABI 4, the supervisor decides TCP by the same ports.
    let tcp = match (&spec.network, notified.tcp) {
        (sandbox::Network::Tcp { connect, bind }, true) => Some(crate::supervisor::Ports {
            connect: connect.clone(),
            bind: bind.clone(),
        }),
        _ => None,
    };
    // What the command leaves behind is ended by the supervisor, in a user namespace of
    // the command's own where one can be made (decided now, made last).
    let mut ending = sandbox::ending::plan(is_root);
    let ends = ending == sandbox::ending::Plan::Namespace;
    // The supervisor is started first: gate is small then (the fork copies little, and
    // the intermediate process is long gone when gate reaps it before exec), and it
    // inherits none of the walk's descriptors, nor the command's user namespace.
    let mut needs_userns = false;
    let checks_execs = execs.is_some();
    let unreadable = move |why: &str| {
        if checks_execs {
            crate::supervisor::unreadable_without_namespace(why)
        } else {
            crate::supervisor::tcp_unreadable_without_namespace(why)
        }
    };
    let supervisor = if notified.any() || ends {
        let error = |e: String| sandbox::SandboxError(e);
        // Under Yama's ptrace_scope 1 or 2, the command's own user namespace is what
        // lets the supervisor read its memory (and copy its sockets).
        if execs.is_some() || tcp.is_some() {
            let reading = crate::supervisor::readable(false)
                .map_err(|why| error(format!("{why}; nothing was run")))?;
            if reading == crate::supervisor::Reading::OwnUserNamespace {
                if let sandbox::ending::Plan::NotEnded(why) = &ending {
                    return Err(error(format!("{}; nothing was run", unreadable(why))));
                }
                needs_userns = true;
            }
        }
        let proxy = match &spec.proxy {
            None => None,
            Some(domains) => {
                let policy = crate::netproxy::Policy::new(&domains.allow, &domains.deny)
                    .and_then(|p| p.with_resolve(&domains.resolve))
                    .map_err(|e| error(format!("{e}; nothing was run")))?;
                Some(crate::supervisor::Bound::bind(policy).map_err(|e| error(e.to_string()))?)
            }
        };
        Some(
            crate::supervisor::Supervisor::start(crate::supervisor::Duties {
                execs,
                proxy,
                tcp,
                drop_capabilities: true,
            })
            .map_err(|e| error(e.to_string()))?,
        )
    } else {
        None
    };
    let mut sandbox = sandbox::Sandbox::prepare(&spec, kernel, notified)?;
    let userns = if ends {
        match sandbox::ending::enter()? {
            Ok(userns) => Some(userns),
            Err(why) if needs_userns => {
                return Err(sandbox::SandboxError(format!(
                    "{}; nothing was run",
                    unreadable(&why)
                )));
            }
            Err(why) => {
                ending = sandbox::ending::Plan::NotEnded(why);
                None
            }
        }
    } else {
        None
    };
    sandbox.left_behind(&ending);
    Ok(Prepared {
        sandbox,
        supervisor,
        userns,
    })
}

/// The sandbox, prepared, with gate's supervisor when the run has one, and the
/// command's user namespace when what it leaves behind is ended.
pub(super) struct Prepared {
    pub(super) sandbox: sandbox::Sandbox,
    pub(super) supervisor: Option<crate::supervisor::Supervisor>,
    pub(super) userns: Option<std::os::fd::OwnedFd>,
}
