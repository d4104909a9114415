//! macOS virtual key codes for pawl's [`Key`]s and key-event sequences for chords.
//!
//! Key codes are `kVK_*` from HIToolbox `Events.h` (ANSI layout positions: the code names
//! a key position, not a character). Flags are `CGEventFlags` ([`crate::cg::flags`]).

use pawl_engine::Key;

use crate::cg::flags;
use crate::tap::Synthetic;

/// A modifier key: its virtual key code and its flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modifier {
    /// `kVK_Control`, `kVK_Shift`, …
    pub code: u16,
    /// Its `CGEventFlags` bit.
    pub flag: u64,
}

/// The modifier of `key`, `None` for a non-modifier.
pub fn modifier(key: Key) -> Option<Modifier> {
    let (code, flag) = match key {
        Key::Ctrl => (0x3B, flags::CONTROL),
        Key::Shift => (0x38, flags::SHIFT),
        Key::Alt => (0x3A, flags::ALTERNATE),
        Key::Super => (0x37, flags::COMMAND),
        Key::RightCtrl => (0x3E, flags::CONTROL),
        Key::RightShift => (0x3C, flags::SHIFT),
        Key::RightAlt => (0x3D, flags::ALTERNATE),
        Key::RightSuper => (0x36, flags::COMMAND),
        Key::Fn => (0x3F, flags::SECONDARY_FN),
        _ => return None,
    };
    Some(Modifier { code, flag })
}

/// The modifier keys pressed for a flag mask, in press order (Control, Option, Shift,
/// Command). Fn and numeric-pad bits are not keys of their own here: they ride on the key
/// event's flags, as a real keyboard sends them with arrow and function keys.
pub fn modifiers_of_mask(mask: u64) -> impl Iterator<Item = Modifier> {
    [Key::Ctrl, Key::Alt, Key::Shift, Key::Super]
        .into_iter()
        .filter_map(modifier)
        .filter(move |m| mask & m.flag != 0)
}

/// The virtual key code of a non-modifier key; `None` for modifiers and keys macOS has no
/// key code for (see [`Key::available_on`]: XF86 navigation, media, volume and brightness keys,
/// Print, Pause, Scroll_Lock, Num_Lock, Caps_Lock, F21–F24).
pub fn key_code(key: Key) -> Option<u16> {
    use Key::*;
    Some(match key {
        A => 0x00,
        S => 0x01,
        D => 0x02,
        F => 0x03,
        H => 0x04,
        G => 0x05,
        Z => 0x06,
        X => 0x07,
        C => 0x08,
        V => 0x09,
        B => 0x0B,
        Q => 0x0C,
        W => 0x0D,
        E => 0x0E,
        R => 0x0F,
        Y => 0x10,
        T => 0x11,
        Num1 => 0x12,
        Num2 => 0x13,
        Num3 => 0x14,
        Num4 => 0x15,
        Num6 => 0x16,
        Num5 => 0x17,
        Equal => 0x18,
        Num9 => 0x19,
        Num7 => 0x1A,
        Minus => 0x1B,
        Num8 => 0x1C,
        Num0 => 0x1D,
        BracketRight => 0x1E,
        O => 0x1F,
        U => 0x20,
        BracketLeft => 0x21,
        I => 0x22,
        P => 0x23,
        Return => 0x24,
        L => 0x25,
        J => 0x26,
        K => 0x28,
        Comma => 0x2B,
        Slash => 0x2C,
        N => 0x2D,
        M => 0x2E,
        Period => 0x2F,
        Tab => 0x30,
        Space => 0x31,
        Grave => 0x32,
        BackSpace => 0x33,
        Escape => 0x35,
        F5 => 0x60,
        F6 => 0x61,
        F7 => 0x62,
        F3 => 0x63,
        F8 => 0x64,
        F9 => 0x65,
        F11 => 0x67,
        F10 => 0x6D,
        F12 => 0x6F,
        Home => 0x73,
        PageUp => 0x74,
        Delete => 0x75,
        F4 => 0x76,
        End => 0x77,
        F2 => 0x78,
        PageDown => 0x79,
        F1 => 0x7A,
        Left => 0x7B,
        Right => 0x7C,
        Down => 0x7D,
        Up => 0x7E,
        Semicolon => 0x29,
        Apostrophe => 0x27,
        Backslash => 0x2A,
        // kVK_Help sits where a PC keyboard has Insert (and Apple's extended keyboard sends it).
        Insert => 0x72,
        // kVK_ContextualMenu.
        Menu => 0x6E,
        F13 => 0x69,
        F14 => 0x6B,
        F15 => 0x71,
        F16 => 0x6A,
        F17 => 0x40,
        F18 => 0x4F,
        F19 => 0x50,
        F20 => 0x5A,
        Kp0 => 0x52,
        Kp1 => 0x53,
        Kp2 => 0x54,
        Kp3 => 0x55,
        Kp4 => 0x56,
        Kp5 => 0x57,
        Kp6 => 0x58,
        Kp7 => 0x59,
        Kp8 => 0x5B,
        Kp9 => 0x5C,
        KpAdd => 0x45,
        KpSubtract => 0x4E,
        KpMultiply => 0x43,
        KpDivide => 0x4B,
        KpDecimal => 0x41,
        KpEnter => 0x4C,
        KpEqual => 0x51,
        Ctrl | Shift | Alt | Super | RightCtrl | RightShift | RightAlt | RightSuper | Fn | Back
        | Forward | Print | Pause | ScrollLock | CapsLock | NumLock | F21 | F22 | F23 | F24
        | AudioPlay | AudioStop | AudioPrev | AudioNext | AudioMicMute | BrightnessDown
        | BrightnessUp => return None,
        // kVK_VolumeUp/Down/Mute (0x48–0x4A) exist, but posted as key events they do nothing:
        // macOS takes media keys as NSSystemDefined events (subtype 8), which the config
        // rejects on macOS instead.
        AudioMute | AudioLowerVolume | AudioRaiseVolume => return None,
    })
}

/// Flags a real keyboard sets on a key by itself: arrow keys carry numeric-pad and Fn,
/// function and navigation keys carry Fn, keypad keys carry numeric-pad.
pub fn intrinsic_flags(code: u16) -> u64 {
    match code {
        0x7B..=0x7E => flags::NUMERIC_PAD | flags::SECONDARY_FN,
        0x60..=0x6F | 0x72..=0x7A | 0x40 | 0x4F | 0x50 | 0x5A => flags::SECONDARY_FN,
        0x41 | 0x43 | 0x45 | 0x4B | 0x4C | 0x4E | 0x51..=0x59 | 0x5B | 0x5C => flags::NUMERIC_PAD,
        _ => 0,
    }
}

/// The events that press and release `code` with the modifiers of `mask`: a flags-changed
/// event per modifier (pressed one by one), key down and key up with every flag, then a
/// flags-changed event per modifier in reverse order, the last one with no flag set, so no
/// modifier stays held.
pub fn hotkey_events(code: u16, mask: u64) -> Vec<Synthetic> {
    let mods: Vec<Modifier> = modifiers_of_mask(mask).collect();
    let key_flags = mask | intrinsic_flags(code);
    press_release(code, &mods, key_flags)
}

/// The events for a chord: modifiers pressed in order, the other keys pressed in order and
/// released in reverse, modifiers released in reverse. Errors name a key macOS has no code
/// for, or a chord with more than one non-modifier key.
pub fn chord_events(keys: &[Key]) -> Result<Vec<Synthetic>, String> {
    let mut mods = Vec::new();
    let mut main = None;
    for &k in keys {
        match (modifier(k), key_code(k)) {
            (Some(m), _) => mods.push(m),
            (None, Some(code)) if main.is_none() => main = Some(code),
            (None, Some(_)) => {
                return Err(format!(
                    "chord {:?}: only one non-modifier key can be posted on macOS",
                    names(keys)
                ));
            }
            (None, None) => return Err(format!("key {:?} has no macOS key code", k.name())),
        }
    }
    let mask = mods.iter().fold(0, |m, md| m | md.flag);
    match main {
        Some(code) => Ok(press_release(code, &mods, mask | intrinsic_flags(code))),
        // A modifier-only chord: press and release the modifiers.
        None => {
            let mut out = Vec::new();
            let mut held = 0;
            for m in &mods {
                held |= m.flag;
                out.push(Synthetic::FlagsChanged {
                    code: m.code,
                    flags: held,
                });
            }
            for m in mods.iter().rev() {
                held &= !m.flag;
                out.push(Synthetic::FlagsChanged {
                    code: m.code,
                    flags: held,
                });
            }
            Ok(out)
        }
    }
}

fn press_release(code: u16, mods: &[Modifier], key_flags: u64) -> Vec<Synthetic> {
    let mut out = Vec::with_capacity(mods.len() * 2 + 2);
    let mut held = 0;
    for m in mods {
        held |= m.flag;
        out.push(Synthetic::FlagsChanged {
            code: m.code,
            flags: held,
        });
    }
    out.push(Synthetic::Key {
        code,
        down: true,
        flags: key_flags,
    });
    out.push(Synthetic::Key {
        code,
        down: false,
        flags: key_flags,
    });
    for m in mods.iter().rev() {
        held &= !m.flag;
        out.push(Synthetic::FlagsChanged {
            code: m.code,
            flags: held,
        });
    }
    out
}

fn names(keys: &[Key]) -> String {
    keys.iter().map(|k| k.name()).collect::<Vec<_>>().join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_the_config_accepts_on_macos_has_a_unique_code() {
        let mut seen = std::collections::HashSet::new();
        for &k in Key::ALL {
            let available = k.available_on(pawl_engine::Platform::MacOs);
            match (k.is_modifier(), key_code(k)) {
                (true, code) => {
                    assert_eq!(code, None, "{k:?}");
                    assert!(modifier(k).is_some() && available, "{k:?}");
                }
                (false, Some(code)) => {
                    assert!(seen.insert(code), "{k:?} duplicates {code:#x}");
                    assert!(available, "{k:?} has a code but the config rejects it");
                }
                (false, None) => assert!(!available, "{k:?} is accepted but has no code"),
            }
        }
    }

    #[test]
    fn keypad_keys_carry_the_numeric_pad_flag_and_f13_up_carry_fn() {
        assert_eq!(key_code(Key::KpEnter), Some(0x4C));
        assert_eq!(intrinsic_flags(0x4C), flags::NUMERIC_PAD);
        assert_eq!(
            intrinsic_flags(key_code(Key::F13).unwrap()),
            flags::SECONDARY_FN
        );
        assert_eq!(
            intrinsic_flags(key_code(Key::F17).unwrap()),
            flags::SECONDARY_FN
        );
        assert_eq!(intrinsic_flags(key_code(Key::Semicolon).unwrap()), 0);
    }

    #[test]
    fn hotkey_releases_every_modifier_with_flags_changed_events() {
        let events = hotkey_events(123, 0x84_0000);
        assert_eq!(
            events,
            vec![
                Synthetic::FlagsChanged {
                    code: 0x3B,
                    flags: flags::CONTROL
                },
                Synthetic::Key {
                    code: 123,
                    down: true,
                    flags: 0x84_0000 | flags::NUMERIC_PAD
                },
                Synthetic::Key {
                    code: 123,
                    down: false,
                    flags: 0x84_0000 | flags::NUMERIC_PAD
                },
                Synthetic::FlagsChanged {
                    code: 0x3B,
                    flags: 0
                },
            ]
        );
    }

    #[test]
    fn chord_presses_modifiers_in_order_and_releases_them_in_reverse() {
        let events = chord_events(&[Key::Super, Key::Shift, Key::BracketLeft]).unwrap();
        let last = events.last().unwrap();
        assert_eq!(
            *last,
            Synthetic::FlagsChanged {
                code: 0x37,
                flags: 0
            }
        );
        assert_eq!(
            events[0],
            Synthetic::FlagsChanged {
                code: 0x37,
                flags: flags::COMMAND
            }
        );
        assert_eq!(
            events[2],
            Synthetic::Key {
                code: 0x21,
                down: true,
                flags: flags::COMMAND | flags::SHIFT
            }
        );
        assert_eq!(events.len(), 6);
    }

    #[test]
    fn chord_with_a_key_macos_lacks_is_an_error_naming_it() {
        let err = chord_events(&[Key::Alt, Key::Back]).unwrap_err();
        assert!(err.contains("XF86Back"), "{err}");
        assert!(chord_events(&[Key::A, Key::B]).is_err());
        let mods_only = chord_events(&[Key::Ctrl]).unwrap();
        assert_eq!(mods_only.len(), 2);
    }
}
