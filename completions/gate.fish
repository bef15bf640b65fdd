# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_gate_global_optspecs
    string join \n help version level= allow= deny= ask= unsandboxed= shell= config= no-config audit-log= timeout= session= socket= no-tty compound readonly readonly-rules write= deny-read= net net-connect= net-bind= allow-domain= deny-domain= resolve= unix-sockets best-effort c=
end

function __fish_gate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_gate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_gate_using_subcommand
    set -l cmd (__fish_gate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c gate -n "__fish_gate_needs_command" -l level -d 'Permission level: deny, ask, safe or full [env: GATE_LEVEL] [default: ask]' -r -f -a "deny\t''
ask\t''
safe\t''
full\t''"
complete -c gate -n "__fish_gate_needs_command" -l allow -d 'Allow commands that are RULE or start with RULE and a space (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l deny -d 'Refuse commands that start with RULE, at every level: in the text, and each program when it runs (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l ask -d 'Ask a person before commands that start with RULE, at every level that runs commands, even when an allow rule matches; read in the text as deny rules are (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l unsandboxed -d 'safe: commands that are RULE or start with RULE and a space may run outside the sandbox, each time a person approves (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l shell -d 'The real shell that runs -c commands [env: GATE_SHELL] [default: /bin/sh]' -r -F
complete -c gate -n "__fish_gate_needs_command" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_needs_command" -l audit-log -d 'Append one JSON line per decision to PATH, or turn the log off [env: GATE_AUDIT_LOG]' -r -F
complete -c gate -n "__fish_gate_needs_command" -l timeout -d 'How long to wait for an approver; unanswered means denied [env: GATE_TIMEOUT] [default: 60]' -r
complete -c gate -n "__fish_gate_needs_command" -l session -d 'Session that remembered approvals belong to [env: GATE_SESSION]' -r
complete -c gate -n "__fish_gate_needs_command" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_needs_command" -l write -d 'safe: also allow writing under PATH (repeatable; the workspace, /tmp, $TMPDIR and /dev/shm always are)' -r -F
complete -c gate -n "__fish_gate_needs_command" -l deny-read -d 'safe: also hide PATH from the command (repeatable; added to ~/.ssh, ~/.aws and the other defaults)' -r -F
complete -c gate -n "__fish_gate_needs_command" -l net-connect -d 'safe: allow TCP connections to PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l net-bind -d 'safe: allow binding TCP PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l allow-domain -d 'safe: allow connections through gate\'s proxy to DOMAIN (`host` on port 443, `*.host` for its subdomains, `host:PORT`, `host:*`, or a preset: @npm, @pypi, @crates, @go, @github; repeatable); nothing else is reached' -r
complete -c gate -n "__fish_gate_needs_command" -l deny-domain -d 'safe: refuse DOMAIN through the proxy even where --allow-domain would allow it (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -l resolve -d 'safe: the proxy resolves NAME to ADDRESS, which may be a private or loopback one (repeatable)' -r
complete -c gate -n "__fish_gate_needs_command" -s c -d 'Judge COMMAND, then run it with the real shell (-c COMMAND NAME ARGS...)' -r -f -a "(__fish_complete_command)"
complete -c gate -n "__fish_gate_needs_command" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_needs_command" -l version -d 'Print gate\'s version'
complete -c gate -n "__fish_gate_needs_command" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_needs_command" -l no-tty -d 'Never ask on the terminal'
complete -c gate -n "__fish_gate_needs_command" -l compound -d 'ask: also allow `a && b`, `a || b`, `a; b` and `a | b` when every part is allowed on its own (off by default)'
complete -c gate -n "__fish_gate_needs_command" -l readonly -d 'ask: also allow commands of the read-only preset (ls, cat, grep, git status, ... with argument checks) without asking'
complete -c gate -n "__fish_gate_needs_command" -l readonly-rules -d 'ask: an allow rule that is itself a read-only command (git diff, find, sed -n) allows only commands that pass the read-only checks too'
complete -c gate -n "__fish_gate_needs_command" -l net -d 'safe: allow the network (it is off by default)'
complete -c gate -n "__fish_gate_needs_command" -l unix-sockets -d 'safe: allow Unix sockets, which can reach D-Bus, Docker or ssh-agent outside the sandbox (off by default)'
complete -c gate -n "__fish_gate_needs_command" -l best-effort -d 'safe: run even if the kernel cannot enforce every part of the sandbox, with a warning naming what is not'
complete -c gate -n "__fish_gate_needs_command" -a "check" -d 'Print the decision for a command and why, without running anything'
complete -c gate -n "__fish_gate_needs_command" -a "doctor" -d 'Report what this machine can enforce; exit 0 when safe can be fully enforced'
complete -c gate -n "__fish_gate_needs_command" -a "rules" -d 'List the rules in force, each with where it came from, and what the lock lets later layers change'
complete -c gate -n "__fish_gate_needs_command" -a "trust" -d 'Trust a project\'s .gate.toml, so that it may loosen as well as tighten; say what that grants'
complete -c gate -n "__fish_gate_needs_command" -a "import" -d 'Read the rules an agent already has (Claude Code, Codex CLI, Gemini CLI) and write them as gate rules, never widening'
complete -c gate -n "__fish_gate_needs_command" -a "serve" -d 'Run the approval broker: hold the requests of gates at level ask until an approver answers'
complete -c gate -n "__fish_gate_needs_command" -a "pending" -d 'List the requests waiting in the broker: id, command, directory, session, age'
complete -c gate -n "__fish_gate_needs_command" -a "approve" -d 'Approve a waiting request; prints answered, already settled or not found (exit 0, 3, 4)'
complete -c gate -n "__fish_gate_needs_command" -a "deny" -d 'Deny a waiting request; prints answered, already settled or not found (exit 0, 3, 4)'
complete -c gate -n "__fish_gate_needs_command" -a "watch" -d 'Approve on this terminal: prompt for each request as it reaches the broker'
complete -c gate -n "__fish_gate_needs_command" -a "ask" -d 'Ask the user a question through the approver; print the answer (exit 0) or exit 1'
complete -c gate -n "__fish_gate_needs_command" -a "completions" -d 'Print the completion script for SHELL (bash, zsh or fish) on standard output'
complete -c gate -n "__fish_gate_using_subcommand check" -l system-file -d 'Load FILE as the system file (with its lock) instead of /etc/gate/config.toml, to check it before installing it' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l system-drop-ins -d 'Load the *.toml files in DIR as the system drop-ins instead of /etc/gate/config.d, to check them before installing them' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l level -d 'Permission level: deny, ask, safe or full [env: GATE_LEVEL] [default: ask]' -r -f -a "deny\t''
ask\t''
safe\t''
full\t''"
complete -c gate -n "__fish_gate_using_subcommand check" -l allow -d 'Allow commands that are RULE or start with RULE and a space (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l deny -d 'Refuse commands that start with RULE, at every level: in the text, and each program when it runs (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l ask -d 'Ask a person before commands that start with RULE, at every level that runs commands, even when an allow rule matches; read in the text as deny rules are (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l unsandboxed -d 'safe: commands that are RULE or start with RULE and a space may run outside the sandbox, each time a person approves (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l shell -d 'The real shell that runs -c commands [env: GATE_SHELL] [default: /bin/sh]' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l audit-log -d 'Append one JSON line per decision to PATH, or turn the log off [env: GATE_AUDIT_LOG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l timeout -d 'How long to wait for an approver; unanswered means denied [env: GATE_TIMEOUT] [default: 60]' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l session -d 'Session that remembered approvals belong to [env: GATE_SESSION]' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l write -d 'safe: also allow writing under PATH (repeatable; the workspace, /tmp, $TMPDIR and /dev/shm always are)' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l deny-read -d 'safe: also hide PATH from the command (repeatable; added to ~/.ssh, ~/.aws and the other defaults)' -r -F
complete -c gate -n "__fish_gate_using_subcommand check" -l net-connect -d 'safe: allow TCP connections to PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l net-bind -d 'safe: allow binding TCP PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l allow-domain -d 'safe: allow connections through gate\'s proxy to DOMAIN (`host` on port 443, `*.host` for its subdomains, `host:PORT`, `host:*`, or a preset: @npm, @pypi, @crates, @go, @github; repeatable); nothing else is reached' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l deny-domain -d 'safe: refuse DOMAIN through the proxy even where --allow-domain would allow it (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -l resolve -d 'safe: the proxy resolves NAME to ADDRESS, which may be a private or loopback one (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand check" -s c -d 'The command text to judge, as an agent would pass it to -c' -r -f -a "(__fish_complete_command)"
complete -c gate -n "__fish_gate_using_subcommand check" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand check" -l json -d 'Print the decision as one JSON object'
complete -c gate -n "__fish_gate_using_subcommand check" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand check" -l no-tty -d 'Never ask on the terminal'
complete -c gate -n "__fish_gate_using_subcommand check" -l compound -d 'ask: also allow `a && b`, `a || b`, `a; b` and `a | b` when every part is allowed on its own (off by default)'
complete -c gate -n "__fish_gate_using_subcommand check" -l readonly -d 'ask: also allow commands of the read-only preset (ls, cat, grep, git status, ... with argument checks) without asking'
complete -c gate -n "__fish_gate_using_subcommand check" -l readonly-rules -d 'ask: an allow rule that is itself a read-only command (git diff, find, sed -n) allows only commands that pass the read-only checks too'
complete -c gate -n "__fish_gate_using_subcommand check" -l net -d 'safe: allow the network (it is off by default)'
complete -c gate -n "__fish_gate_using_subcommand check" -l unix-sockets -d 'safe: allow Unix sockets, which can reach D-Bus, Docker or ssh-agent outside the sandbox (off by default)'
complete -c gate -n "__fish_gate_using_subcommand check" -l best-effort -d 'safe: run even if the kernel cannot enforce every part of the sandbox, with a warning naming what is not'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l system-file -d 'Load FILE as the system file (with its lock) instead of /etc/gate/config.toml, to check it before installing it' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l system-drop-ins -d 'Load the *.toml files in DIR as the system drop-ins instead of /etc/gate/config.d, to check them before installing them' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l level -d 'Permission level: deny, ask, safe or full [env: GATE_LEVEL] [default: ask]' -r -f -a "deny\t''
ask\t''
safe\t''
full\t''"
complete -c gate -n "__fish_gate_using_subcommand doctor" -l allow -d 'Allow commands that are RULE or start with RULE and a space (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l deny -d 'Refuse commands that start with RULE, at every level: in the text, and each program when it runs (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l ask -d 'Ask a person before commands that start with RULE, at every level that runs commands, even when an allow rule matches; read in the text as deny rules are (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l unsandboxed -d 'safe: commands that are RULE or start with RULE and a space may run outside the sandbox, each time a person approves (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l shell -d 'The real shell that runs -c commands [env: GATE_SHELL] [default: /bin/sh]' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l audit-log -d 'Append one JSON line per decision to PATH, or turn the log off [env: GATE_AUDIT_LOG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l timeout -d 'How long to wait for an approver; unanswered means denied [env: GATE_TIMEOUT] [default: 60]' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l session -d 'Session that remembered approvals belong to [env: GATE_SESSION]' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l write -d 'safe: also allow writing under PATH (repeatable; the workspace, /tmp, $TMPDIR and /dev/shm always are)' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l deny-read -d 'safe: also hide PATH from the command (repeatable; added to ~/.ssh, ~/.aws and the other defaults)' -r -F
complete -c gate -n "__fish_gate_using_subcommand doctor" -l net-connect -d 'safe: allow TCP connections to PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l net-bind -d 'safe: allow binding TCP PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l allow-domain -d 'safe: allow connections through gate\'s proxy to DOMAIN (`host` on port 443, `*.host` for its subdomains, `host:PORT`, `host:*`, or a preset: @npm, @pypi, @crates, @go, @github; repeatable); nothing else is reached' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l deny-domain -d 'safe: refuse DOMAIN through the proxy even where --allow-domain would allow it (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l resolve -d 'safe: the proxy resolves NAME to ADDRESS, which may be a private or loopback one (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand doctor" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l json -d 'Print the report as one JSON object'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l no-tty -d 'Never ask on the terminal'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l compound -d 'ask: also allow `a && b`, `a || b`, `a; b` and `a | b` when every part is allowed on its own (off by default)'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l readonly -d 'ask: also allow commands of the read-only preset (ls, cat, grep, git status, ... with argument checks) without asking'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l readonly-rules -d 'ask: an allow rule that is itself a read-only command (git diff, find, sed -n) allows only commands that pass the read-only checks too'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l net -d 'safe: allow the network (it is off by default)'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l unix-sockets -d 'safe: allow Unix sockets, which can reach D-Bus, Docker or ssh-agent outside the sandbox (off by default)'
complete -c gate -n "__fish_gate_using_subcommand doctor" -l best-effort -d 'safe: run even if the kernel cannot enforce every part of the sandbox, with a warning naming what is not'
complete -c gate -n "__fish_gate_using_subcommand rules" -l system-file -d 'Load FILE as the system file (with its lock) instead of /etc/gate/config.toml, to check it before installing it' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l system-drop-ins -d 'Load the *.toml files in DIR as the system drop-ins instead of /etc/gate/config.d, to check them before installing them' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l level -d 'Permission level: deny, ask, safe or full [env: GATE_LEVEL] [default: ask]' -r -f -a "deny\t''
ask\t''
safe\t''
full\t''"
complete -c gate -n "__fish_gate_using_subcommand rules" -l allow -d 'Allow commands that are RULE or start with RULE and a space (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l deny -d 'Refuse commands that start with RULE, at every level: in the text, and each program when it runs (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l ask -d 'Ask a person before commands that start with RULE, at every level that runs commands, even when an allow rule matches; read in the text as deny rules are (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l unsandboxed -d 'safe: commands that are RULE or start with RULE and a space may run outside the sandbox, each time a person approves (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l shell -d 'The real shell that runs -c commands [env: GATE_SHELL] [default: /bin/sh]' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l audit-log -d 'Append one JSON line per decision to PATH, or turn the log off [env: GATE_AUDIT_LOG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l timeout -d 'How long to wait for an approver; unanswered means denied [env: GATE_TIMEOUT] [default: 60]' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l session -d 'Session that remembered approvals belong to [env: GATE_SESSION]' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l write -d 'safe: also allow writing under PATH (repeatable; the workspace, /tmp, $TMPDIR and /dev/shm always are)' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l deny-read -d 'safe: also hide PATH from the command (repeatable; added to ~/.ssh, ~/.aws and the other defaults)' -r -F
complete -c gate -n "__fish_gate_using_subcommand rules" -l net-connect -d 'safe: allow TCP connections to PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l net-bind -d 'safe: allow binding TCP PORT only (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l allow-domain -d 'safe: allow connections through gate\'s proxy to DOMAIN (`host` on port 443, `*.host` for its subdomains, `host:PORT`, `host:*`, or a preset: @npm, @pypi, @crates, @go, @github; repeatable); nothing else is reached' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l deny-domain -d 'safe: refuse DOMAIN through the proxy even where --allow-domain would allow it (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l resolve -d 'safe: the proxy resolves NAME to ADDRESS, which may be a private or loopback one (repeatable)' -r
complete -c gate -n "__fish_gate_using_subcommand rules" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand rules" -l json -d 'Print the rules and the lock as one JSON object'
complete -c gate -n "__fish_gate_using_subcommand rules" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand rules" -l no-tty -d 'Never ask on the terminal'
complete -c gate -n "__fish_gate_using_subcommand rules" -l compound -d 'ask: also allow `a && b`, `a || b`, `a; b` and `a | b` when every part is allowed on its own (off by default)'
complete -c gate -n "__fish_gate_using_subcommand rules" -l readonly -d 'ask: also allow commands of the read-only preset (ls, cat, grep, git status, ... with argument checks) without asking'
complete -c gate -n "__fish_gate_using_subcommand rules" -l readonly-rules -d 'ask: an allow rule that is itself a read-only command (git diff, find, sed -n) allows only commands that pass the read-only checks too'
complete -c gate -n "__fish_gate_using_subcommand rules" -l net -d 'safe: allow the network (it is off by default)'
complete -c gate -n "__fish_gate_using_subcommand rules" -l unix-sockets -d 'safe: allow Unix sockets, which can reach D-Bus, Docker or ssh-agent outside the sandbox (off by default)'
complete -c gate -n "__fish_gate_using_subcommand rules" -l best-effort -d 'safe: run even if the kernel cannot enforce every part of the sandbox, with a warning naming what is not'
complete -c gate -n "__fish_gate_using_subcommand trust" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand trust" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand trust" -l revoke -d 'Remove the trust record of FILE (or of the project file in force here)'
complete -c gate -n "__fish_gate_using_subcommand trust" -l list -d 'List the trusted project files, and whether each is unchanged since'
complete -c gate -n "__fish_gate_using_subcommand import" -l system-drop-ins -d 'Write administrators\' rules to DIR instead of /etc/gate/config.d (as root), and load it to check them' -r
complete -c gate -n "__fish_gate_using_subcommand import" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand import" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand import" -l save -d 'Write the imported rules to gate\'s import file for the agent (without it, nothing is written)'
complete -c gate -n "__fish_gate_using_subcommand import" -l print -d 'Print the files an import writes on stdout (the table goes to stderr)'
complete -c gate -n "__fish_gate_using_subcommand import" -l project -d 'Import the allow rules of this directory\'s project files too (their deny and ask rules always are)'
complete -c gate -n "__fish_gate_using_subcommand import" -l whole-words -d 'Gemini CLI: accept gate\'s whole-word reading of a deny or ask rule\'s commandPrefix'
complete -c gate -n "__fish_gate_using_subcommand serve" -l requests-socket -d 'Also take requests (never answers) on PATH, open to every user: for an approver who is another user, or on another machine (docs/approvals.md)' -r -F
complete -c gate -n "__fish_gate_using_subcommand serve" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand serve" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand serve" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand serve" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand pending" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand pending" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand pending" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand pending" -l json -d 'Print the open requests as one JSON array'
complete -c gate -n "__fish_gate_using_subcommand pending" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand approve" -l remember-rule -d 'Also allow later commands matching the allow rule RULE for the rest of the session (requests already waiting are still asked)' -r
complete -c gate -n "__fish_gate_using_subcommand approve" -l always-rule -d 'Always allow commands starting with RULE from now on (a prefix allow rule that must match this command), added to your always-allow file' -r
complete -c gate -n "__fish_gate_using_subcommand approve" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand approve" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand approve" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand approve" -l remember -d 'Also approve the same command, in any directory, for the rest of its session'
complete -c gate -n "__fish_gate_using_subcommand approve" -l always -d 'Always allow this exact command from now on, in any session: the broker adds it to your always-allow file (~/.config/gate/always.toml) as an exact allow rule'
complete -c gate -n "__fish_gate_using_subcommand approve" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand deny" -l message -d 'Why, or what to do instead: the agent\'s model reads it' -r
complete -c gate -n "__fish_gate_using_subcommand deny" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand deny" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand deny" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand deny" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand watch" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand watch" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand watch" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand watch" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand ask" -l option -d 'A choice to offer (repeatable); the answer may still be free text' -r
complete -c gate -n "__fish_gate_using_subcommand ask" -l level -d 'Permission level: deny, ask, safe or full [env: GATE_LEVEL] [default: ask]' -r -f -a "deny\t''
ask\t''
safe\t''
full\t''"
complete -c gate -n "__fish_gate_using_subcommand ask" -l config -d 'Read FILE instead of the user configuration file [env: GATE_CONFIG]' -r -F
complete -c gate -n "__fish_gate_using_subcommand ask" -l timeout -d 'How long to wait for an approver; unanswered means denied [env: GATE_TIMEOUT] [default: 60]' -r
complete -c gate -n "__fish_gate_using_subcommand ask" -l session -d 'Session that remembered approvals belong to [env: GATE_SESSION]' -r
complete -c gate -n "__fish_gate_using_subcommand ask" -l socket -d 'Approver socket [env: GATE_SOCKET]' -r -F
complete -c gate -n "__fish_gate_using_subcommand ask" -l help -d 'Print this help'
complete -c gate -n "__fish_gate_using_subcommand ask" -l multiple -d 'More than one option may be chosen'
complete -c gate -n "__fish_gate_using_subcommand ask" -l no-config -d 'Read no configuration file (refused when the system file is locked)'
complete -c gate -n "__fish_gate_using_subcommand ask" -l no-tty -d 'Never ask on the terminal'
complete -c gate -n "__fish_gate_using_subcommand completions" -l help -d 'Print this help'
