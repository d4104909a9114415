//! The permission report of `pawl status` and `pawl devices` on macOS: what macOS grants
//! pawl, and what to do about what it does not, including the known stale-grant case.
//!
//! The answers come from `AXIsProcessTrusted`, `CGPreflightPostEventAccess`,
//! `CGPreflightListenEventAccess` and one probe tap (created and invalidated at once),
//! read by `crate::sys` on macOS; this module only words them.

use std::fmt;

/// What macOS grants the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permissions {
    /// `AXIsProcessTrusted()`: the Accessibility grant, needed for active event taps.
    pub accessibility: bool,
    /// `CGPreflightPostEventAccess()`: may post events (the `cg-event` backend).
    pub post_events: bool,
    /// `CGPreflightListenEventAccess()`: may listen to events (Input Monitoring).
    pub listen_events: bool,
    /// Whether a probe event tap could be created; `None` when not tried.
    pub tap_probe: Option<bool>,
}

impl Permissions {
    /// The stale-grant case: macOS lists pawl as trusted but refuses its event tap (the
    /// grant belongs to an earlier build of the binary; TCC matches the code signature).
    pub fn stale_grant(&self) -> bool {
        self.accessibility && self.tap_probe == Some(false)
    }

    /// Whether the worker can run: trusted and (when probed) the tap is created.
    pub fn ok(&self) -> bool {
        self.accessibility && self.tap_probe != Some(false)
    }
}

impl fmt::Display for Permissions {
    /// One line per permission, then what to do, one line per step.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes_no = |b: bool| if b { "granted" } else { "not granted" };
        writeln!(
            f,
            "accessibility (AXIsProcessTrusted): {}",
            yes_no(self.accessibility)
        )?;
        writeln!(
            f,
            "post events (CGPreflightPostEventAccess): {}",
            yes_no(self.post_events)
        )?;
        writeln!(
            f,
            "listen events (CGPreflightListenEventAccess): {}",
            yes_no(self.listen_events)
        )?;
        match self.tap_probe {
            Some(true) => writeln!(f, "event tap: can be created")?,
            Some(false) => writeln!(f, "event tap: macOS refuses to create it")?,
            None => {}
        }
        if !self.accessibility {
            writeln!(
                f,
                "to fix: System Settings > Privacy & Security > Accessibility: turn pawl on \
                 (when pawl is started from a terminal, the terminal app needs it; as a \
                 LaunchAgent, the pawl binary itself)"
            )?;
        } else if self.stale_grant() {
            writeln!(
                f,
                "to fix: the grant is stale (it was given to an earlier build of pawl): in \
                 System Settings > Privacy & Security > Accessibility select pawl, remove it \
                 with \"-\", add the current binary with \"+\", then restart pawl (`pawl \
                 service install` again for the LaunchAgent, `pawl off && pawl on` when a \
                 terminal starts it); \
                 `tccutil reset Accessibility` clears the grants of every app if the entry \
                 cannot be removed"
            )?;
        }
        if self.accessibility && !self.post_events {
            writeln!(
                f,
                "note: without post-event access the cg-event action backend cannot press \
                 shortcuts; the default system-events backend does not need it"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(granted: bool) -> Permissions {
        Permissions {
            accessibility: granted,
            post_events: granted,
            listen_events: granted,
            tap_probe: Some(granted),
        }
    }

    #[test]
    fn granted_report_names_each_check_and_gives_no_advice() {
        let p = all(true);
        assert!(p.ok() && !p.stale_grant());
        let text = p.to_string();
        assert!(text.contains("accessibility (AXIsProcessTrusted): granted"));
        assert!(text.contains("CGPreflightPostEventAccess): granted"));
        assert!(text.contains("CGPreflightListenEventAccess): granted"));
        assert!(!text.contains("to fix"));
    }

    #[test]
    fn untrusted_report_says_where_to_grant_it() {
        let p = all(false);
        assert!(!p.ok() && !p.stale_grant());
        assert!(
            p.to_string()
                .contains("Privacy & Security > Accessibility: turn pawl on")
        );
    }

    #[test]
    fn tap_refused_while_trusted_is_the_stale_grant_case() {
        let p = Permissions {
            tap_probe: Some(false),
            ..all(true)
        };
        assert!(p.stale_grant() && !p.ok());
        let text = p.to_string();
        assert!(text.contains("grant is stale"), "{text}");
        assert!(text.contains("tccutil reset Accessibility"), "{text}");
    }

    #[test]
    fn unprobed_trust_is_ok() {
        let p = Permissions {
            tap_probe: None,
            ..all(true)
        };
        assert!(p.ok());
        assert!(!p.to_string().contains("event tap"));
    }
}
