//! Device capabilities as the kernel reports them (bitmaps of `EV_*`, `KEY_*`, `REL_*`,
//! `ABS_*`, `MSC_*` codes and `INPUT_PROP_*` bits), the pointer/keyboard classification
//! that decides which nodes pawl may open, and the capabilities of a device's uinput clone.
//!
//! Pure: the bitmaps come from sysfs text ([`parse_sysfs_bitmap`]) or from `EVIOCGBIT`
//! bytes ([`BitSet::from_le_bytes`]); nothing here touches a device.

use pawl_engine::units::{Button, ButtonSet};
use pawl_evdev::codes::*;

/// `ABS_MAX` (`include/uapi/linux/input-event-codes.h`).
pub const ABS_MAX: u16 = 0x3f;
/// `MSC_MAX`.
pub const MSC_MAX: u16 = 0x07;
/// `EV_MAX`.
pub const EV_MAX: u16 = 0x1f;
/// `INPUT_PROP_MAX`.
pub const INPUT_PROP_MAX: u16 = 0x1f;
/// `EV_REP`: kernel autorepeat. Never set on a clone (the source's own repeats are
/// forwarded; a second repeat timer would double them).
pub const EV_REP: u16 = 0x14;
/// `BTN_JOYSTICK`: first joystick button; an absolute device with it is a joystick, not a
/// pointer.
pub const BTN_JOYSTICK: u16 = 0x120;
/// `BTN_GAMEPAD` (`BTN_SOUTH`).
pub const BTN_GAMEPAD: u16 = 0x130;
/// `BTN_STYLUS`: pen tablets are absolute pointers.
pub const BTN_STYLUS: u16 = 0x14b;
/// `BTN_TOOL_PEN`.
pub const BTN_TOOL_PEN: u16 = 0x140;

/// A fixed-size bitmap of `W` 64-bit words: bit `n` is code `n`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitSet<const W: usize>(pub [u64; W]);

impl<const W: usize> Default for BitSet<W> {
    fn default() -> Self {
        BitSet([0; W])
    }
}

impl<const W: usize> std::fmt::Debug for BitSet<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<const W: usize> BitSet<W> {
    /// How many bits fit.
    pub const BITS: usize = W * 64;

    /// Whether bit `n` is set (`false` beyond the end).
    #[inline]
    pub fn get(&self, n: u16) -> bool {
        let n = usize::from(n);
        n < Self::BITS && self.0[n / 64] & (1 << (n % 64)) != 0
    }

    /// Sets bit `n` (ignored beyond the end).
    #[inline]
    pub fn set(&mut self, n: u16) {
        let n = usize::from(n);
        if n < Self::BITS {
            self.0[n / 64] |= 1 << (n % 64);
        }
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// The set bits, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0..Self::BITS as u16).filter(|n| self.get(*n))
    }

    /// A bitmap from the bytes an `EVIOCGBIT`/`EVIOCGKEY`/`EVIOCGPROP` ioctl fills: an
    /// array of kernel `unsigned long`, which on little-endian machines is bit `n` at byte
    /// `n / 8`, bit `n % 8` (and on 64-bit big-endian, native-endian 8-byte words).
    pub fn from_le_bytes(bytes: &[u8]) -> BitSet<W> {
        let mut set = BitSet::default();
        for (i, chunk) in bytes.chunks(8).take(W).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            set.0[i] = if cfg!(target_endian = "little") {
                u64::from_le_bytes(word)
            } else {
                u64::from_ne_bytes(word)
            };
        }
        set
    }
}

/// Parses a sysfs capability bitmap (`/sys/class/input/eventN/device/capabilities/key`,
/// `…/properties`): hex words of the kernel's `unsigned long` (`long_bits` = 64 on 64-bit
/// kernels), most significant word first, separated by spaces (the kernel's
/// `input_print_bitmap`). Returns `None` for text that is not such a bitmap.
pub fn parse_sysfs_bitmap<const W: usize>(text: &str, long_bits: u32) -> Option<BitSet<W>> {
    let mut set = BitSet::<W>::default();
    let words: Vec<&str> = text.split_whitespace().collect();
    for (i, word) in words.iter().rev().enumerate() {
        let value = u64::from_str_radix(word, 16).ok()?;
        if long_bits < 64 && value >> long_bits != 0 {
            return None;
        }
        for bit in 0..long_bits {
            if value & (1 << bit) != 0 {
                let n = i as u64 * u64::from(long_bits) + u64::from(bit);
                match u16::try_from(n) {
                    Ok(n) if usize::from(n) < BitSet::<W>::BITS => set.set(n),
                    // A bit beyond what pawl tracks (e.g. KEY_MAX growing) is ignored.
                    _ => {}
                }
            }
        }
    }
    Some(set)
}

/// The capabilities of an evdev device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caps {
    /// `EV_*` types.
    pub ev: BitSet<1>,
    /// `KEY_*` / `BTN_*` codes (`KEY_MAX` = 0x2ff, 768 bits).
    pub key: BitSet<12>,
    /// `REL_*` codes.
    pub rel: BitSet<1>,
    /// `ABS_*` codes.
    pub abs: BitSet<1>,
    /// `MSC_*` codes.
    pub msc: BitSet<1>,
    /// `INPUT_PROP_*` bits.
    pub props: BitSet<1>,
}

/// What kind of device a node is, as far as pawl cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A relative pointer: a mouse, trackball, or a wheel-only device. Its evdev node may
    /// also carry some keys (many mice report a few `KEY_*` codes).
    Mouse,
    /// An absolute pointer: a touchpad, touchscreen or pen tablet. Never in a wheel scope.
    AbsolutePointer,
    /// Anything else: keyboards, buttons, switches, joysticks. pawl never opens these.
    Other,
}

impl Caps {
    /// Whether the device reports a vertical or horizontal wheel (lo-res or hi-res).
    pub fn has_wheel(&self) -> bool {
        self.ev.get(EV_REL)
            && [REL_WHEEL, REL_HWHEEL, REL_WHEEL_HI_RES, REL_HWHEEL_HI_RES]
                .iter()
                .any(|c| self.rel.get(*c))
    }

    /// Whether the device reports keyboard keys: any `KEY_*` code outside the `BTN_*`
    /// ranges (below `BTN_MISC` 0x100, or from `KEY_OK` 0x160 up), e.g. the media keys of a
    /// receiver's "Consumer Control" node.
    pub fn has_keyboard_keys(&self) -> bool {
        self.ev.get(EV_KEY) && self.key.iter().any(|c| !(0x100..0x160).contains(&c))
    }

    /// Classifies the device. A mouse has `REL_X`+`REL_Y`, or a wheel and no keyboard keys
    /// (a wheel beside media keys is a receiver's Consumer Control node: keystrokes, never
    /// opened); an absolute pointer
    /// has `ABS_X`+`ABS_Y` and a finger, touch, pen or mouse button or
    /// `INPUT_PROP_POINTER`, and no joystick/gamepad buttons. Everything else (a keyboard
    /// above all) is [`Kind::Other`]: similar to udev's `input_id` builtin, which sets
    /// `ID_INPUT_MOUSE`/`ID_INPUT_TOUCHPAD` from the same bits.
    pub fn kind(&self) -> Kind {
        let rel = self.ev.get(EV_REL);
        if rel && self.rel.get(REL_X) && self.rel.get(REL_Y)
            || self.has_wheel() && !self.has_keyboard_keys()
        {
            return Kind::Mouse;
        }
        let abs_xy = self.ev.get(EV_ABS) && self.abs.get(ABS_X) && self.abs.get(ABS_Y);
        let joystick = self.key.get(BTN_JOYSTICK) || self.key.get(BTN_GAMEPAD);
        let pointerish = self.key.get(BTN_TOOL_FINGER)
            || self.key.get(BTN_TOUCH)
            || self.key.get(BTN_STYLUS)
            || self.key.get(BTN_TOOL_PEN)
            || self.key.get(BTN_LEFT)
            || self.props.get(INPUT_PROP_POINTER);
        if abs_xy && pointerish && !joystick {
            return Kind::AbsolutePointer;
        }
        Kind::Other
    }

    /// Which wheel codes the source reports, for the decoder (travel is read from hi-res
    /// codes when present).
    pub fn wheel_caps(&self) -> pawl_evdev::WheelCaps {
        pawl_evdev::WheelCaps {
            hires_wheel: self.rel.get(REL_WHEEL_HI_RES),
            hires_hwheel: self.rel.get(REL_HWHEEL_HI_RES),
        }
    }

    /// The capabilities of the uinput clone of a device with these capabilities: the same
    /// `EV_KEY`, `EV_REL`, `EV_ABS`, `EV_MSC` codes and `INPUT_PROP_*` bits, with
    /// `REL_WHEEL`+`REL_WHEEL_HI_RES` both present when the source has either (same for
    /// `REL_HWHEEL`+`REL_HWHEEL_HI_RES`), because pawl writes both codes in every wheel
    /// frame. Event types pawl does not write (`EV_REP`, `EV_LED`, `EV_SND`, `EV_FF`,
    /// `EV_SW`) are left out.
    pub fn clone_caps(&self) -> Caps {
        let mut c = Caps {
            key: self.key,
            rel: self.rel,
            abs: self.abs,
            msc: self.msc,
            props: self.props,
            ..Caps::default()
        };
        for (lores, hires) in [
            (REL_WHEEL, REL_WHEEL_HI_RES),
            (REL_HWHEEL, REL_HWHEEL_HI_RES),
        ] {
            if c.rel.get(lores) || c.rel.get(hires) {
                c.rel.set(lores);
                c.rel.set(hires);
            }
        }
        if !self.ev.get(EV_KEY) {
            c.key = BitSet::default();
        }
        if !self.ev.get(EV_REL) {
            c.rel = BitSet::default();
        }
        if !self.ev.get(EV_ABS) {
            c.abs = BitSet::default();
        }
        if !self.ev.get(EV_MSC) {
            c.msc = BitSet::default();
        }
        c.ev.set(EV_SYN);
        for (ty, empty) in [
            (EV_KEY, c.key.is_empty()),
            (EV_REL, c.rel.is_empty()),
            (EV_ABS, c.abs.is_empty()),
            (EV_MSC, c.msc.is_empty()),
        ] {
            if !empty {
                c.ev.set(ty);
            }
        }
        c
    }

    /// Which wheel axes the clone reports that the source lacks: `(lo-res missing,
    /// hi-res missing)` per axis `[vertical, horizontal]`. pawl derives or synthesizes
    /// those codes for frames it would otherwise forward unchanged.
    pub fn missing_wheel_codes(&self) -> [(bool, bool); 2] {
        pawl_evdev::stream::missing_wheel_codes(|c| self.ev.get(EV_REL) && self.rel.get(c))
    }
}

/// The mouse buttons held in an `EVIOCGKEY` key-state bitmap, as pawl's 0-based buttons
/// (`code - BTN_MOUSE`, for `BTN_MOUSE..BTN_JOYSTICK`).
pub fn buttons_down(keys: &BitSet<12>) -> ButtonSet {
    let mut set = ButtonSet::default();
    for code in BTN_MOUSE..BTN_MOUSE_END {
        if keys.get(code) {
            set.set(Button((code - BTN_MOUSE) as u8), true);
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(ev: &[u16], key: &[u16], rel: &[u16], abs: &[u16]) -> Caps {
        let mut c = Caps::default();
        ev.iter().for_each(|b| c.ev.set(*b));
        key.iter().for_each(|b| c.key.set(*b));
        rel.iter().for_each(|b| c.rel.set(*b));
        abs.iter().for_each(|b| c.abs.set(*b));
        c
    }

    /// Every `KEY_*` from `KEY_ESC` (1) to `KEY_D` (32) and more: what a keyboard reports.
    fn keyboard_keys() -> Vec<u16> {
        (1..=120).collect()
    }

    #[test]
    fn sysfs_bitmap_words_are_most_significant_first() {
        // A mouse's key capabilities: BTN_LEFT..BTN_TASK (0x110..0x117) sit in word 4 of
        // 64-bit longs: "ff0000 0 0 0 0" is bits 0x110..=0x117.
        let keys: BitSet<12> = parse_sysfs_bitmap("ff0000 0 0 0 0", 64).unwrap();
        assert_eq!(
            keys.iter().collect::<Vec<_>>(),
            (0x110..=0x117).collect::<Vec<_>>()
        );
        let rel: BitSet<1> = parse_sysfs_bitmap("1943", 64).unwrap();
        assert_eq!(
            rel.iter().collect::<Vec<_>>(),
            vec![
                REL_X,
                REL_Y,
                REL_HWHEEL,
                REL_WHEEL,
                REL_WHEEL_HI_RES,
                REL_HWHEEL_HI_RES
            ]
        );
    }

    #[test]
    fn sysfs_bitmap_of_32_bit_kernels_uses_32_bit_words() {
        let keys: BitSet<12> = parse_sysfs_bitmap("ff0000 0 0 0 0 0 0 0 0", 32).unwrap();
        assert_eq!(
            keys.iter().collect::<Vec<_>>(),
            (0x110..=0x117).collect::<Vec<_>>()
        );
        assert_eq!(parse_sysfs_bitmap::<1>("1ffffffff", 32), None);
    }

    #[test]
    fn empty_and_malformed_sysfs_bitmaps() {
        assert_eq!(parse_sysfs_bitmap::<1>("0\n", 64), Some(BitSet::default()));
        assert_eq!(parse_sysfs_bitmap::<1>("", 64), Some(BitSet::default()));
        assert_eq!(parse_sysfs_bitmap::<1>("zz", 64), None);
    }

    #[test]
    fn ioctl_bytes_are_little_endian_longs() {
        let mut bytes = [0u8; 96];
        bytes[0x110 / 8] = 0b0000_0101; // BTN_LEFT, BTN_MIDDLE
        let keys = BitSet::<12>::from_le_bytes(&bytes);
        assert_eq!(keys.iter().collect::<Vec<_>>(), vec![BTN_LEFT, BTN_MIDDLE]);
    }

    #[test]
    fn keyboard_only_device_is_never_a_pointer() {
        let kbd = caps(
            &[EV_SYN, EV_KEY, EV_MSC, EV_REP],
            &keyboard_keys(),
            &[],
            &[],
        );
        assert_eq!(kbd.kind(), Kind::Other);
    }

    #[test]
    fn mouse_with_a_few_keys_is_a_pointer() {
        let mut keys = vec![BTN_LEFT, BTN_RIGHT, BTN_MIDDLE, BTN_SIDE, BTN_EXTRA];
        keys.extend([2u16, 3, 4, 113, 114, 115]); // KEY_1.., KEY_MUTE, volume
        let mouse = caps(
            &[EV_SYN, EV_KEY, EV_REL],
            &keys,
            &[REL_X, REL_Y, REL_WHEEL],
            &[],
        );
        assert_eq!(mouse.kind(), Kind::Mouse);
        assert!(mouse.has_wheel());
    }

    #[test]
    fn keyboard_and_mouse_on_one_node_is_a_pointer() {
        // hid-generic puts every report of a combo receiver on one node.
        let mut keys = keyboard_keys();
        keys.push(BTN_LEFT);
        let combo = caps(&[EV_SYN, EV_KEY, EV_REL], &keys, &[REL_X, REL_Y], &[]);
        assert_eq!(combo.kind(), Kind::Mouse);
    }

    #[test]
    fn wheel_only_device_is_a_pointer() {
        let wheel = caps(&[EV_SYN, EV_REL], &[], &[REL_HWHEEL], &[]);
        assert_eq!(wheel.kind(), Kind::Mouse);
    }

    #[test]
    fn consumer_control_node_with_a_pan_wheel_is_not_a_pointer() {
        // A Bolt/Unifying receiver's "Consumer Control" node: media keys plus AC Pan as
        // REL_HWHEEL. Its keystrokes are not pawl's to read.
        let consumer = caps(
            &[EV_SYN, EV_KEY, EV_REL, EV_MSC],
            &[113, 114, 115, 163, 164, 165, 0x240],
            &[REL_HWHEEL],
            &[],
        );
        assert!(consumer.has_keyboard_keys());
        assert_eq!(consumer.kind(), Kind::Other);
    }

    #[test]
    fn touchpad_and_tablet_are_absolute_pointers_and_a_joystick_is_not() {
        let mut touchpad = caps(
            &[EV_SYN, EV_KEY, EV_ABS],
            &[BTN_LEFT, BTN_TOOL_FINGER, BTN_TOUCH],
            &[],
            &[ABS_X, ABS_Y, ABS_MT_POSITION_X],
        );
        touchpad.props.set(INPUT_PROP_POINTER);
        assert_eq!(touchpad.kind(), Kind::AbsolutePointer);
        let pen = caps(
            &[EV_SYN, EV_KEY, EV_ABS],
            &[BTN_TOOL_PEN, BTN_STYLUS],
            &[],
            &[ABS_X, ABS_Y],
        );
        assert_eq!(pen.kind(), Kind::AbsolutePointer);
        let joystick = caps(
            &[EV_SYN, EV_KEY, EV_ABS],
            &[BTN_JOYSTICK, BTN_TOUCH],
            &[],
            &[ABS_X, ABS_Y],
        );
        assert_eq!(joystick.kind(), Kind::Other);
        let accel = caps(&[EV_SYN, EV_ABS], &[], &[], &[ABS_X, ABS_Y, 2]);
        assert_eq!(accel.kind(), Kind::Other, "an accelerometer has no buttons");
    }

    #[test]
    fn clone_gets_hires_wheel_codes_with_the_lores_ones() {
        let src = caps(
            &[EV_SYN, EV_KEY, EV_REL, EV_MSC],
            &[BTN_LEFT],
            &[REL_X, REL_Y, REL_WHEEL],
            &[],
        );
        let clone = src.clone_caps();
        assert!(clone.rel.get(REL_WHEEL) && clone.rel.get(REL_WHEEL_HI_RES));
        assert!(!clone.rel.get(REL_HWHEEL) && !clone.rel.get(REL_HWHEEL_HI_RES));
        assert_eq!(src.missing_wheel_codes(), [(false, true), (false, false)]);
    }

    #[test]
    fn clone_gets_lores_wheel_codes_with_the_hires_ones() {
        let src = caps(
            &[EV_SYN, EV_REL],
            &[],
            &[REL_X, REL_Y, REL_HWHEEL_HI_RES],
            &[],
        );
        let clone = src.clone_caps();
        assert!(clone.rel.get(REL_HWHEEL) && clone.rel.get(REL_HWHEEL_HI_RES));
        assert_eq!(src.missing_wheel_codes(), [(false, false), (true, false)]);
    }

    #[test]
    fn clone_copies_keys_abs_msc_and_props_but_not_autorepeat() {
        let mut src = caps(
            &[EV_SYN, EV_KEY, EV_REL, EV_ABS, EV_MSC, EV_REP, 0x11],
            &[BTN_LEFT, 30],
            &[REL_X, REL_Y, REL_WHEEL, REL_WHEEL_HI_RES],
            &[ABS_X],
        );
        src.msc.set(MSC_SCAN);
        src.props.set(INPUT_PROP_POINTER);
        let clone = src.clone_caps();
        assert_eq!(
            clone.ev.iter().collect::<Vec<_>>(),
            vec![EV_SYN, EV_KEY, EV_REL, EV_ABS, EV_MSC]
        );
        assert_eq!(clone.key, src.key);
        assert_eq!(clone.rel, src.rel);
        assert_eq!(clone.abs, src.abs);
        assert_eq!(clone.msc, src.msc);
        assert_eq!(clone.props, src.props);
    }

    #[test]
    fn key_state_bitmap_gives_mouse_buttons_down() {
        let mut keys = BitSet::<12>::default();
        keys.set(BTN_LEFT);
        keys.set(BTN_FORWARD);
        keys.set(30); // KEY_A is not a mouse button
        let down = buttons_down(&keys);
        assert_eq!(down.iter().collect::<Vec<_>>(), vec![Button(0), Button(5)]);
    }
}
