//! Before exec at `safe`, and for deny rules at exec: the sandbox's spec built from the
//! settings, admitted against what the kernel can enforce, and prepared, with gate's
//! supervisor started first when the run needs one. Nothing here is enforced: the caller
//! enforces last, right before exec.

use crate::config::Settings;
use crate::explain;
use crate::sandbox;
use crate::settings::{protected_files, sandbox_settings};

use super::var;

/// gate's supervisor: started with the sandbox, or, outside it, to start right before
/// exec.
pub(super) enum Deferred {
    Started(crate::supervisor::Supervisor),
    /// With whether the command must run in a user namespace of its own, for the
    /// supervisor to read its memory ([`crate::supervisor::Reading`]).
    Start(Box<crate::supervisor::Execs>, bool),
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
            sandbox::ending::Plan::NotEnded(why) => Err(explain::not_run(
                &crate::supervisor::unreadable_without_namespace(&why),
                None,
            )),
        },
        Err(why) => Err(explain::not_run(&why, None)),
    }
}

/// Build and prepare the sandbox for a run in the current directory, with gate's
/// supervisor when the run needs one (network by domain, deny rules at exec, ending what
/// the command leaves behind). `Err` is the line to print: this is the edge where the
/// sandbox's and the supervisor's errors are told as a run that did not happen.
pub(super) fn prepare_sandbox(
    settings: &Settings,
    execs: Option<crate::supervisor::Execs>,
) -> Result<Prepared, String> {
    let not_run = |e: sandbox::SandboxError| explain::sandbox_not_run(&e);
    let cwd = std::env::current_dir()
        .map_err(|e| explain::not_run(&format!("cannot find the working directory ({e})"), None))?;
    crate::agents::agent_workspace(&cwd, &var).map_err(|e| e.line())?;
    let is_root = nix::unistd::geteuid().is_root();
    let spec = sandbox::spec::build(
        &sandbox_settings(settings),
        &cwd,
        &var,
        is_root,
        &protected_files(settings),
    )
    .map_err(not_run)?;
    tracing::debug!(?spec, "sandbox");
    let kernel = sandbox::Sandbox::admit(&spec).map_err(not_run)?;
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
        // Under Yama's ptrace_scope 1 or 2, the command's own user namespace is what
        // lets the supervisor read its memory (and copy its sockets).
        if execs.is_some() || tcp.is_some() {
            let reading =
                crate::supervisor::readable(false).map_err(|why| explain::not_run(&why, None))?;
            if reading == crate::supervisor::Reading::OwnUserNamespace {
                if let sandbox::ending::Plan::NotEnded(why) = &ending {
                    return Err(explain::not_run(&unreadable(why), None));
                }
                needs_userns = true;
            }
        }
        let proxy = match &spec.proxy {
            None => None,
            Some(domains) => {
                let policy = crate::netproxy::Policy::new(&domains.allow, &domains.deny)
                    .and_then(|p| p.with_resolve(&domains.resolve))
                    .map_err(|e| explain::not_run(&e, None))?;
                Some(
                    crate::supervisor::Bound::bind(policy)
                        .map_err(|e| explain::not_run(&e, None))?,
                )
            }
        };
        Some(
            crate::supervisor::Supervisor::start(crate::supervisor::Duties {
                execs,
                proxy,
                tcp,
                drop_capabilities: true,
            })
            .map_err(|e| explain::not_run(&e, None))?,
        )
    } else {
        None
    };
    let mut sandbox = sandbox::Sandbox::prepare(&spec, kernel, notified).map_err(not_run)?;
    let userns = if ends {
        match sandbox::ending::enter().map_err(not_run)? {
            Ok(userns) => Some(userns),
            Err(why) if needs_userns => {
                return Err(explain::not_run(&unreadable(&why), None));
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
