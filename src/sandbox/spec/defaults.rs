//! The built-in lists of the safe level: the secrets hidden and the files kept
//! read-only by default, for every user and for root. Data only; [`super::build`] reads
//! them. The secrets of every home are taken from the read-only preset's list
//! ([`crate::policy::readonly::DEFAULT_HIDDEN_SECRETS`]), their one home.

/// Secrets hidden by default, relative to the home directory: the secrets every home
/// may hold, whose one home is the read-only preset's list (the preset refuses to show
/// them, the sandbox hides them).
pub(crate) const DEFAULT_DENY_READ: [&str; 16] = crate::policy::readonly::DEFAULT_HIDDEN_SECRETS;

/// Files that run later outside the sandbox, relative to the home directory: readable,
/// never writable, even when the workspace contains them.
pub(crate) const DEFAULT_DENY_WRITE: [&str; 16] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".config/gate",
    // Codex CLI's settings, rules and instructions: it applies them outside the sandbox
    // (sandbox mode, approval policy, programs it starts), and a command Codex runs can
    // be given that directory as its working directory (`exec_command`'s `workdir`).
    ".codex",
    // The other agents' own settings, which they apply outside gate at their next start:
    // Claude Code's hooks and permissions (`~/.claude/settings.json`), Gemini CLI's and
    // Qwen Code's MCP servers and tool settings (`settings.json`). The agents write
    // there themselves, outside the sandbox; their commands have no reason to.
    ".claude",
    ".gemini",
    ".qwen",
];

/// Root's own secrets, hidden when gate runs as root: files and directories that uid 0
/// owns and nobody else may read, which root without capabilities still reads as their
/// owner. The password hashes and their backups, old passwords, TLS, VPN, Wi-Fi,
/// Kerberos and PPP keys, the database maintenance password Debian keeps for MySQL.
/// Root's home gets the defaults above too, whatever `HOME` is ([`ROOT_HOME`]).
pub(crate) const ROOT_DENY_READ: [&str; 19] = [
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/var/backups/shadow.bak",
    "/var/backups/gshadow.bak",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
    "/etc/wireguard",
    "/etc/letsencrypt",
    "/etc/ipsec.secrets",
    "/etc/ipsec.d/private",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/mysql/debian.cnf",
    "/var/lib/samba/private",
];

/// Root's home directory, where [`DEFAULT_DENY_READ`] is hidden from root even when
/// `HOME` is elsewhere.
pub(crate) const ROOT_HOME: &str = "/root";

/// Directories where secrets lie beside ordinary settings: as root, every entry of one
/// that uid 0 owns and others may not read is hidden too (the ssh host keys
/// `ssh_host_*_key`, whatever their type, beside their public halves; PPP and OpenVPN
/// keys under any name). One listing and a `stat` per entry, only where they exist.
pub(crate) const ROOT_SCANNED: [&str; 3] = ["/etc/ssh", "/etc/ppp", "/etc/openvpn"];
