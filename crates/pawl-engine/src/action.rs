//! Actions the engine fires, key names and chords, and the per-desktop default chords.
//!
//! The engine only names actions; a platform backend performs them (a key chord on a
//! virtual keyboard, an `osascript` call, a spawned command).

/// What a gesture direction, a gesture click or a mapped button does. `Copy`: chords and
/// commands are referred to by index into [`crate::Config::chords`] and
/// [`crate::Config::commands`], so firing an action never allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Do nothing (the input is still swallowed).
    None,
    /// Forward the original button press and release unchanged.
    PassThrough,
    /// Switch to the desktop (space, workspace) on the left.
    DesktopLeft,
    /// Switch to the desktop on the right.
    DesktopRight,
    /// Mission Control / GNOME Activities overview / KDE Overview.
    Overview,
    /// Application windows (macOS App Exposé, KDE present windows of the current app).
    AppExpose,
    /// Show the desktop.
    ShowDesktop,
    /// Navigate back (browser, file manager).
    Back,
    /// Navigate forward.
    Forward,
    /// Press a key chord: index into [`crate::Config::chords`].
    Key(u16),
    /// Run a command: index into [`crate::Config::commands`].
    Command(u16),
}

impl Action {
    /// The config spelling of a built-in action, `None` for `Key`/`Command`.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Action::None => "none",
            Action::PassThrough => "pass-through",
            Action::DesktopLeft => "desktop-left",
            Action::DesktopRight => "desktop-right",
            Action::Overview => "overview",
            Action::AppExpose => "app-expose",
            Action::ShowDesktop => "show-desktop",
            Action::Back => "back",
            Action::Forward => "forward",
            Action::Key(_) | Action::Command(_) => return None,
        })
    }

    /// Parses a built-in action name (the inverse of [`Action::name`]).
    pub fn from_name(s: &str) -> Option<Action> {
        BUILTIN_ACTIONS
            .iter()
            .copied()
            .find(|a| a.name() == Some(s))
    }
}

/// Every built-in action, in documentation order.
pub const BUILTIN_ACTIONS: &[Action] = &[
    Action::None,
    Action::PassThrough,
    Action::DesktopLeft,
    Action::DesktopRight,
    Action::Overview,
    Action::AppExpose,
    Action::ShowDesktop,
    Action::Back,
    Action::Forward,
];

macro_rules! keys {
    ($($variant:ident = $($name:literal)|+ ;)*) => {
        /// A key pawl can press in a chord, platform-neutral. Backends map it to a Linux
        /// `KEY_*` code or a macOS virtual key code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)]
        pub enum Key { $($variant,)* }

        impl Key {
            /// Every key, in declaration order.
            pub const ALL: &'static [Key] = &[$(Key::$variant,)*];

            /// Accepted spellings (case-insensitive); the first is canonical.
            pub fn names(self) -> &'static [&'static str] {
                match self { $(Key::$variant => &[$($name),+],)* }
            }
        }
    };
}

keys! {
    Ctrl = "Ctrl" | "Control" | "Control_L" | "LeftCtrl";
    Shift = "Shift" | "Shift_L" | "LeftShift";
    Alt = "Alt" | "Alt_L" | "Option" | "LeftAlt";
    Super = "Super" | "Meta" | "Super_L" | "Win" | "Cmd" | "Command" | "LeftMeta";
    RightCtrl = "RightCtrl" | "Control_R";
    RightShift = "RightShift" | "Shift_R";
    RightAlt = "RightAlt" | "Alt_R" | "AltGr";
    RightSuper = "RightSuper" | "Super_R" | "RightMeta";
    Fn = "Fn";
    A = "A"; B = "B"; C = "C"; D = "D"; E = "E"; F = "F"; G = "G"; H = "H"; I = "I";
    J = "J"; K = "K"; L = "L"; M = "M"; N = "N"; O = "O"; P = "P"; Q = "Q"; R = "R";
    S = "S"; T = "T"; U = "U"; V = "V"; W = "W"; X = "X"; Y = "Y"; Z = "Z";
    Num0 = "0"; Num1 = "1"; Num2 = "2"; Num3 = "3"; Num4 = "4";
    Num5 = "5"; Num6 = "6"; Num7 = "7"; Num8 = "8"; Num9 = "9";
    F1 = "F1"; F2 = "F2"; F3 = "F3"; F4 = "F4"; F5 = "F5"; F6 = "F6";
    F7 = "F7"; F8 = "F8"; F9 = "F9"; F10 = "F10"; F11 = "F11"; F12 = "F12";
    Left = "Left"; Right = "Right"; Up = "Up"; Down = "Down";
    PageUp = "Page_Up" | "PageUp" | "Prior";
    PageDown = "Page_Down" | "PageDown" | "Next";
    Home = "Home"; End = "End";
    Tab = "Tab"; Escape = "Escape" | "Esc"; Return = "Return" | "Enter";
    Space = "Space"; BackSpace = "BackSpace"; Delete = "Delete" | "Del";
    BracketLeft = "bracketleft" | "[" | "LeftBrace"; BracketRight = "bracketright" | "]" | "RightBrace";
    Minus = "minus" | "-"; Equal = "equal" | "=";
    Comma = "comma" | ","; Period = "period" | "."; Slash = "slash" | "/";
    Grave = "grave" | "`";
    Back = "XF86Back" | "Back"; Forward = "XF86Forward" | "Forward";
    Semicolon = "semicolon" | ";"; Apostrophe = "apostrophe" | "'" | "quote";
    Backslash = "backslash" | "\\";
    Insert = "Insert" | "Ins";
    Print = "Print" | "PrintScreen" | "SysRq";
    Pause = "Pause" | "Break";
    ScrollLock = "Scroll_Lock" | "ScrollLock";
    CapsLock = "Caps_Lock" | "CapsLock";
    NumLock = "Num_Lock" | "NumLock";
    Menu = "Menu" | "Compose" | "ContextMenu";
    F13 = "F13"; F14 = "F14"; F15 = "F15"; F16 = "F16"; F17 = "F17"; F18 = "F18";
    F19 = "F19"; F20 = "F20"; F21 = "F21"; F22 = "F22"; F23 = "F23"; F24 = "F24";
    Kp0 = "KP_0"; Kp1 = "KP_1"; Kp2 = "KP_2"; Kp3 = "KP_3"; Kp4 = "KP_4";
    Kp5 = "KP_5"; Kp6 = "KP_6"; Kp7 = "KP_7"; Kp8 = "KP_8"; Kp9 = "KP_9";
    KpAdd = "KP_Add" | "KP_Plus"; KpSubtract = "KP_Subtract" | "KP_Minus";
    KpMultiply = "KP_Multiply"; KpDivide = "KP_Divide";
    KpDecimal = "KP_Decimal"; KpEnter = "KP_Enter"; KpEqual = "KP_Equal";
    AudioPlay = "XF86AudioPlay" | "PlayPause"; AudioStop = "XF86AudioStop";
    AudioPrev = "XF86AudioPrev"; AudioNext = "XF86AudioNext";
    AudioMute = "XF86AudioMute" | "Mute";
    AudioLowerVolume = "XF86AudioLowerVolume" | "VolumeDown";
    AudioRaiseVolume = "XF86AudioRaiseVolume" | "VolumeUp";
    AudioMicMute = "XF86AudioMicMute";
    BrightnessDown = "XF86MonBrightnessDown"; BrightnessUp = "XF86MonBrightnessUp";
}

impl Key {
    /// Parses a key name, case-insensitively (`Super`, `Page_Up`, `bracketleft`, `F4`, …).
    pub fn parse(name: &str) -> Option<Key> {
        Key::ALL
            .iter()
            .copied()
            .find(|k| k.names().iter().any(|n| n.eq_ignore_ascii_case(name)))
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        self.names()[0]
    }

    /// Whether a backend on `platform` can press the key. Linux: every key but `Fn` (the
    /// keyboard's firmware handles it; there is no evdev code). macOS: no key code for the
    /// XF86 navigation, media-playback, microphone and brightness keys (macOS sends those as
    /// system-defined events, not key codes), the PC-only keys Print, Pause, Scroll_Lock and
    /// Num_Lock, Caps_Lock (a toggle macOS does not take from posted key events), and F21–F24
    /// (kVK codes stop at F20). `pawl-evdev` and `pawl-macos` test that their key code tables
    /// agree with this.
    pub fn available_on(self, platform: crate::platform::Platform) -> bool {
        use Key::*;
        match platform {
            crate::platform::Platform::Linux => self != Fn,
            crate::platform::Platform::MacOs => !matches!(
                self,
                Back | Forward
                    | Print
                    | Pause
                    | ScrollLock
                    | CapsLock
                    | NumLock
                    | F21
                    | F22
                    | F23
                    | F24
                    | AudioPlay
                    | AudioStop
                    | AudioPrev
                    | AudioNext
                    | AudioMicMute
                    | AudioMute
                    | AudioLowerVolume
                    | AudioRaiseVolume
                    | BrightnessDown
                    | BrightnessUp
            ),
        }
    }

    /// Whether the key is a modifier (held while the rest of a chord is pressed).
    pub fn is_modifier(self) -> bool {
        matches!(
            self,
            Key::Ctrl
                | Key::Shift
                | Key::Alt
                | Key::Super
                | Key::RightCtrl
                | Key::RightShift
                | Key::RightAlt
                | Key::RightSuper
                | Key::Fn
        )
    }
}

/// A key chord: keys pressed in order and released in reverse order. At most
/// [`Chord::MAX`] keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chord(pub Vec<Key>);

impl Chord {
    /// The most keys a chord may have.
    pub const MAX: usize = 6;

    /// Parses `Super+Page_Up`, `Ctrl+Meta+Left`, `Super`: at most [`Chord::MAX`] keys, each
    /// once. Errors name the unknown or repeated key; a long chord is shortened in them
    /// (its first characters and its length).
    pub fn parse(s: &str) -> Result<Chord, String> {
        let shown = crate::text::quoted(s);
        let parts = s.split('+').count();
        if parts > Chord::MAX {
            return Err(format!(
                "chord {shown} has {parts} keys, at most {}",
                Chord::MAX
            ));
        }
        let mut keys: Vec<Key> = Vec::new();
        for part in s.split('+') {
            let part = part.trim();
            // "Ctrl++" would mean the plus key; pawl spells it "equal"/"plus" instead.
            if part.is_empty() {
                return Err(format!("empty key name in chord {shown}"));
            }
            match Key::parse(part) {
                Some(k) if keys.contains(&k) => {
                    return Err(format!(
                        "chord {shown} names {} twice: each key is pressed once",
                        k.name()
                    ));
                }
                Some(k) => keys.push(k),
                None => {
                    return Err(format!(
                        "unknown key name {} in chord {shown} (`pawl config keys` lists every name)",
                        crate::text::quoted(part)
                    ));
                }
            }
        }
        Ok(Chord(keys))
    }
}

impl std::fmt::Display for Chord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(k.name())?;
        }
        Ok(())
    }
}

/// The desktop environment whose shortcuts the `keys` backend presses for built-in actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Desktop {
    /// GNOME Shell (and other Mutter-based desktops).
    Gnome,
    /// KDE Plasma (KWin).
    Kde,
    /// macOS (Mission Control shortcuts).
    MacOs,
}

impl Desktop {
    /// Picks the desktop from `XDG_CURRENT_DESKTOP` (colon-separated, e.g. `ubuntu:GNOME`):
    /// KDE when it names KDE, GNOME otherwise (GNOME's chords are also the common default of
    /// Cinnamon, Budgie and Pantheon).
    pub fn from_xdg_current_desktop(value: &str) -> Desktop {
        if value.split(':').any(|d| d.eq_ignore_ascii_case("kde")) {
            Desktop::Kde
        } else {
            Desktop::Gnome
        }
    }

    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            Desktop::Gnome => "gnome",
            Desktop::Kde => "kde",
            Desktop::MacOs => "macos",
        }
    }

    /// The default chord for a built-in action on this desktop, `None` when the action has
    /// no chord (`none`, `pass-through`, `key`, `command`).
    ///
    /// Sources: GNOME `org.gnome.desktop.wm.keybindings` defaults (switch-to-workspace-left
    /// `<Super>Page_Up`, show-desktop `<Super>d`, toggle-overview `Super`), KDE KWin default
    /// shortcuts (Switch One Desktop to the Left `Meta+Ctrl+Left`, Overview `Meta+W`, Peek at
    /// Desktop `Meta+D`, Present Windows current app `Ctrl+F7`), macOS Mission Control
    /// defaults (Control+Left/Right, Control+Up, Control+Down, F11; Cmd+[ and Cmd+]).
    pub fn default_chord(self, action: Action) -> Option<&'static [Key]> {
        use Key::*;
        let keys: &'static [Key] = match (self, action) {
            (Desktop::Gnome, Action::DesktopLeft) => &[Super, PageUp],
            (Desktop::Gnome, Action::DesktopRight) => &[Super, PageDown],
            (Desktop::Gnome, Action::Overview) => &[Super],
            (Desktop::Gnome, Action::AppExpose) => &[Super, A],
            (Desktop::Gnome, Action::ShowDesktop) => &[Super, D],
            (Desktop::Kde, Action::DesktopLeft) => &[Ctrl, Super, Left],
            (Desktop::Kde, Action::DesktopRight) => &[Ctrl, Super, Right],
            (Desktop::Kde, Action::Overview) => &[Super, W],
            (Desktop::Kde, Action::AppExpose) => &[Ctrl, F7],
            (Desktop::Kde, Action::ShowDesktop) => &[Super, D],
            (Desktop::MacOs, Action::DesktopLeft) => &[Ctrl, Left],
            (Desktop::MacOs, Action::DesktopRight) => &[Ctrl, Right],
            (Desktop::MacOs, Action::Overview) => &[Ctrl, Up],
            (Desktop::MacOs, Action::AppExpose) => &[Ctrl, Down],
            (Desktop::MacOs, Action::ShowDesktop) => &[F11],
            (Desktop::MacOs, Action::Back) => &[Super, BracketLeft],
            (Desktop::MacOs, Action::Forward) => &[Super, BracketRight],
            (_, Action::Back) => &[Alt, Left],
            (_, Action::Forward) => &[Alt, Right],
            _ => return None,
        };
        Some(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_from_xkb_style_names() {
        assert_eq!(
            Chord::parse("Super+Page_Up").unwrap().0,
            vec![Key::Super, Key::PageUp]
        );
        assert_eq!(
            Chord::parse("ctrl+meta+left").unwrap().0,
            vec![Key::Ctrl, Key::Super, Key::Left]
        );
        assert_eq!(Chord::parse("Super").unwrap().to_string(), "Super");
    }

    #[test]
    fn unknown_key_name_is_named_in_the_error() {
        let err = Chord::parse("Super+Hyper_Q").unwrap_err();
        assert!(err.contains("\"Hyper_Q\""), "{err}");
        assert!(Chord::parse("Super+").unwrap_err().contains("empty"));
    }

    #[test]
    fn every_key_name_is_unique() {
        let mut seen = std::collections::HashSet::new();
        for k in Key::ALL {
            for n in k.names() {
                assert!(
                    seen.insert(n.to_ascii_lowercase()),
                    "duplicate key name {n}"
                );
            }
        }
    }

    #[test]
    fn builtin_action_names_round_trip() {
        for a in BUILTIN_ACTIONS {
            assert_eq!(Action::from_name(a.name().unwrap()), Some(*a));
        }
        assert_eq!(Action::from_name("desktop_left"), None);
    }

    #[test]
    fn desktop_is_chosen_from_xdg_current_desktop() {
        assert_eq!(Desktop::from_xdg_current_desktop("KDE"), Desktop::Kde);
        assert_eq!(
            Desktop::from_xdg_current_desktop("ubuntu:GNOME"),
            Desktop::Gnome
        );
        assert_eq!(Desktop::from_xdg_current_desktop(""), Desktop::Gnome);
    }

    #[test]
    fn gnome_and_kde_desktop_switch_chords_match_their_defaults() {
        assert_eq!(
            Desktop::Gnome.default_chord(Action::DesktopLeft),
            Some(&[Key::Super, Key::PageUp][..])
        );
        assert_eq!(
            Desktop::Kde.default_chord(Action::DesktopRight),
            Some(&[Key::Ctrl, Key::Super, Key::Right][..])
        );
        assert_eq!(
            Desktop::Kde.default_chord(Action::Overview),
            Some(&[Key::Super, Key::W][..])
        );
        assert_eq!(Desktop::Gnome.default_chord(Action::PassThrough), None);
    }
}
