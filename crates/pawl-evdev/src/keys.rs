//! pawl's [`Key`]s as Linux `KEY_*` codes, for the virtual keyboard that performs chords.

use pawl_engine::action::Key;

/// The Linux `KEY_*` code of `key` (`include/uapi/linux/input-event-codes.h`). `Fn` has
/// no evdev code (the keyboard firmware handles it) and maps to `None`.
pub fn linux_key_code(key: Key) -> Option<u16> {
    use Key::*;
    Some(match key {
        Ctrl => 29,
        Shift => 42,
        Alt => 56,
        Super => 125,
        RightCtrl => 97,
        RightShift => 54,
        RightAlt => 100,
        RightSuper => 126,
        Fn => return None,
        A => 30,
        B => 48,
        C => 46,
        D => 32,
        E => 18,
        F => 33,
        G => 34,
        H => 35,
        I => 23,
        J => 36,
        K => 37,
        L => 38,
        M => 50,
        N => 49,
        O => 24,
        P => 25,
        Q => 16,
        R => 19,
        S => 31,
        T => 20,
        U => 22,
        V => 47,
        W => 17,
        X => 45,
        Y => 21,
        Z => 44,
        Num1 => 2,
        Num2 => 3,
        Num3 => 4,
        Num4 => 5,
        Num5 => 6,
        Num6 => 7,
        Num7 => 8,
        Num8 => 9,
        Num9 => 10,
        Num0 => 11,
        F1 => 59,
        F2 => 60,
        F3 => 61,
        F4 => 62,
        F5 => 63,
        F6 => 64,
        F7 => 65,
        F8 => 66,
        F9 => 67,
        F10 => 68,
        F11 => 87,
        F12 => 88,
        Left => 105,
        Right => 106,
        Up => 103,
        Down => 108,
        PageUp => 104,
        PageDown => 109,
        Home => 102,
        End => 107,
        Tab => 15,
        Escape => 1,
        Return => 28,
        Space => 57,
        BackSpace => 14,
        Delete => 111,
        BracketLeft => 26,
        BracketRight => 27,
        Minus => 12,
        Equal => 13,
        Comma => 51,
        Period => 52,
        Slash => 53,
        Grave => 41,
        Back => 158,
        Forward => 159,
        Semicolon => 39,
        Apostrophe => 40,
        Backslash => 43,
        Insert => 110,
        // KEY_SYSRQ: the Print Screen key of a PC keyboard (xkb `Print`), not KEY_PRINT (210,
        // the consumer "AC Print" usage).
        Print => 99,
        Pause => 119,
        ScrollLock => 70,
        CapsLock => 58,
        NumLock => 69,
        // KEY_COMPOSE: the Menu key of a PC keyboard (xkb `Menu`); KEY_MENU (139) is a
        // consumer-control usage few desktops bind.
        Menu => 127,
        F13 => 183,
        F14 => 184,
        F15 => 185,
        F16 => 186,
        F17 => 187,
        F18 => 188,
        F19 => 189,
        F20 => 190,
        F21 => 191,
        F22 => 192,
        F23 => 193,
        F24 => 194,
        Kp0 => 82,
        Kp1 => 79,
        Kp2 => 80,
        Kp3 => 81,
        Kp4 => 75,
        Kp5 => 76,
        Kp6 => 77,
        Kp7 => 71,
        Kp8 => 72,
        Kp9 => 73,
        KpAdd => 78,
        KpSubtract => 74,
        KpMultiply => 55,
        KpDivide => 98,
        KpDecimal => 83,
        KpEnter => 96,
        KpEqual => 117,
        AudioPlay => 164,
        AudioStop => 166,
        AudioPrev => 165,
        AudioNext => 163,
        AudioMute => 113,
        AudioLowerVolume => 114,
        AudioRaiseVolume => 115,
        AudioMicMute => 248,
        BrightnessDown => 224,
        BrightnessUp => 225,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_but_fn_has_a_distinct_linux_code() {
        let mut seen = std::collections::HashSet::new();
        for k in Key::ALL {
            match linux_key_code(*k) {
                Some(c) => assert!(seen.insert(c), "{k:?} shares code {c}"),
                None => assert_eq!(*k, Key::Fn),
            }
        }
    }

    #[test]
    fn a_key_has_a_linux_code_exactly_when_the_config_accepts_it_on_linux() {
        for k in Key::ALL {
            assert_eq!(
                linux_key_code(*k).is_some(),
                k.available_on(pawl_engine::Platform::Linux),
                "{k:?}"
            );
        }
    }

    #[test]
    fn common_pc_and_media_keys_have_their_input_event_codes() {
        assert_eq!(linux_key_code(Key::Print), Some(99)); // KEY_SYSRQ
        assert_eq!(linux_key_code(Key::F24), Some(194)); // KEY_F24
        assert_eq!(linux_key_code(Key::KpEnter), Some(96)); // KEY_KPENTER
        assert_eq!(linux_key_code(Key::AudioPlay), Some(164)); // KEY_PLAYPAUSE
        assert_eq!(linux_key_code(Key::BrightnessUp), Some(225)); // KEY_BRIGHTNESSUP
    }

    #[test]
    fn gnome_desktop_switch_keys_are_super_and_page_up() {
        assert_eq!(linux_key_code(Key::Super), Some(125)); // KEY_LEFTMETA
        assert_eq!(linux_key_code(Key::PageUp), Some(104)); // KEY_PAGEUP
    }
}
