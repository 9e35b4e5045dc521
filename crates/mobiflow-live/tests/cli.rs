//! The command line of `mobiflow-live` (clap): help, version, and usage errors that name
//! the argument and exit with status 2. None of these needs root.

use std::process::{Command, Output};

fn live(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mobiflow-live"))
        .args(args)
        .output()
        .expect("mobiflow-live runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn help_and_version_succeed_on_stdout() {
    let o = live(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.trim(),
        format!("mobiflow-live {}", env!("CARGO_PKG_VERSION"))
    );
    let o = live(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "--set <KEY=VALUE>",
        "--in <a|b>",
        "--duration <SECS>",
        "-- <COMMAND>",
    ] {
        assert!(out.contains(needle), "{needle} not in:\n{out}");
    }
}

#[test]
fn usage_errors_name_the_argument_and_exit_2() {
    for (args, needle) in [
        (
            &["run", "s.toml", "--in", "c"][..],
            "--in <a|b>': \"c\": expected a or b",
        ),
        (
            &["run", "s.toml", "--set", "nokey"][..],
            "\"nokey\": expected KEY=VALUE",
        ),
        (
            &["run", "s.toml", "--duration", "-1"][..],
            "\"-1\": expected seconds > 0",
        ),
        (
            &["run", "s.toml", "--late-fraction", "2"][..],
            "\"2\": expected 0..1",
        ),
        (
            &["run", "s.toml", "--sysctl", "c:k=v"][..],
            "expected a:KEY=VALUE or b:KEY=VALUE",
        ),
        (&["run"][..], "<SCENARIO.toml>"),
        (
            &["run", "s.toml", "extra"][..],
            "unexpected argument 'extra'",
        ),
        (&["launch"][..], "unrecognized subcommand 'launch'"),
        (&[][..], "Usage: mobiflow-live <COMMAND>"),
    ] {
        let o = live(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(needle),
            "{args:?}: {needle} not in:\n{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_missing_scenario_is_refused_before_anything_is_created() {
    let o = live(&["run", "no-such-scenario.toml", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with("error: no-such-scenario.toml"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
