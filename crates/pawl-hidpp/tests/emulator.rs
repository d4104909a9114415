//! The emulated MX Masters against what Solaar recorded from real ones
//! (pwr-Solaar/Solaar `docs/devices/MX Master 3S B034.txt`, `MX Master 3 Wireless Mouse
//! 4082.txt`, `… B023.txt`; see `pawl_hidpp::emulator`). Every fact is read back through
//! the requests a host sends (Root `getFeature`, feature set `getFeatureID`, 0x1B04
//! `getCidInfo`, 0x2121, battery), so the answers and the tables are held against each
//! other and against the recorded values.

use pawl_hidpp::controls::{ControlInfo, additional_flags, info_flags};
use pawl_hidpp::emulator::{ERR_INVALID_FUNCTION, Emulator};
use pawl_hidpp::error::HIDPP20_ERROR;
use pawl_hidpp::feature::{self, hires_wheel, reprog, root};
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing, Message};

const BLUETOOTH: Framing = Framing {
    short: false,
    long: true,
};
const RECEIVER: Framing = Framing {
    short: true,
    long: true,
};

fn ask(emu: &mut Emulator, index: u8, function: u8, params: &[u8]) -> Message {
    let long = Framing {
        short: false,
        long: true,
    };
    let req = Message::request(long, emu.device(), index, function, 0x0A, params);
    let (bytes, len) = req.encode();
    emu.answer(&bytes[..len]).expect("an answer")
}

fn ask_ok(emu: &mut Emulator, index: u8, function: u8, params: &[u8]) -> Message {
    let m = ask(emu, index, function, params);
    assert_ne!(m.sub_id, HIDPP20_ERROR, "error reply {m:?}");
    m
}

/// (index, flags, version) from Root `getFeature`.
fn get_feature(emu: &mut Emulator, id: u16) -> (u8, u8, u8) {
    let m = ask_ok(emu, 0, root::GET_FEATURE, &id.to_be_bytes());
    (m.params[0], m.params[1], m.params[2])
}

fn control_list(emu: &mut Emulator) -> Vec<ControlInfo> {
    let index = get_feature(emu, feature::REPROG_CONTROLS_V4).0;
    let count = ask_ok(emu, index, reprog::GET_COUNT, &[]).params[0];
    (0..count)
        .map(|i| ControlInfo::parse(&ask_ok(emu, index, reprog::GET_CID_INFO, &[i])))
        .collect()
}

fn mx_master_3s() -> Emulator {
    Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)
}

#[test]
fn mx_master_3s_features_sit_at_the_recorded_indices_with_their_versions() {
    let mut emu = mx_master_3s();
    // "Supports 36 HID++ 2.0 features"; feature set getCount excludes Root.
    let set = get_feature(&mut emu, feature::FEATURE_SET).0;
    assert_eq!(ask_ok(&mut emu, set, 0, &[]).params[0], 35);
    // index, id, version as recorded ("4: WIRELESS DEVICE STATUS {1D4B} V0" …); none of
    // these has a flag.
    let recorded = [
        (3, 0x0005, 0),
        (4, 0x1D4B, 0),
        (8, 0x1004, 3),
        (9, 0x1B04, 5),
        (13, 0x2201, 2),
        (14, 0x2110, 0),
        (15, 0x2121, 1),
        (16, 0x2150, 0),
    ];
    for (index, id, version) in recorded {
        assert_eq!(
            get_feature(&mut emu, id),
            (index, 0, version),
            "feature {id:04x}"
        );
    }
    // The battery is 0x1004, not 0x1000 (so the kernel registers one).
    assert_eq!(get_feature(&mut emu, feature::BATTERY_STATUS).0, 0);
    // "19: DEVICE RESET {1802} V0 internal, hidden, unknown:000010", "27: {1E00} hidden",
    // "23: OOBSTATE {1805} internal, hidden", "25: {1891} … unknown:000008".
    assert_eq!(get_feature(&mut emu, 0x1802), (19, 0x70, 0));
    assert_eq!(get_feature(&mut emu, 0x1E00), (27, 0x40, 0));
    assert_eq!(get_feature(&mut emu, 0x1805), (23, 0x60, 0));
    assert_eq!(get_feature(&mut emu, 0x1891), (25, 0x68, 7));
    assert_eq!(get_feature(&mut emu, 0x1806), (21, 0x70, 8));
    assert_eq!(get_feature(&mut emu, 0x9205), (35, 0x70, 0));
}

#[test]
fn mx_master_3s_feature_table_is_the_recorded_one_at_every_index() {
    // Solaar's "Supports 36 HID++ 2.0 features" list, line by line: (id, version, flags);
    // flags: internal 0x20, hidden 0x40, "unknown:000010" 0x10, "unknown:000008" 0x08.
    let recorded: [(u16, u8, u8); 36] = [
        (0x0000, 0, 0),
        (0x0001, 0, 0),
        (0x0003, 4, 0),
        (0x0005, 0, 0),
        (0x1D4B, 0, 0),
        (0x0020, 0, 0),
        (0x0021, 1, 0),
        (0x0007, 0, 0),
        (0x1004, 3, 0),
        (0x1B04, 5, 0),
        (0x1814, 1, 0),
        (0x1815, 2, 0),
        (0x2250, 1, 0),
        (0x2201, 2, 0),
        (0x2110, 0, 0),
        (0x2121, 1, 0),
        (0x2150, 0, 0),
        (0x2251, 0, 0),
        (0x00C3, 0, 0),
        (0x1802, 0, 0x70),
        (0x1803, 0, 0x70),
        (0x1806, 8, 0x70),
        (0x1816, 0, 0x70),
        (0x1805, 0, 0x60),
        (0x1830, 0, 0x70),
        (0x1891, 7, 0x68),
        (0x18A1, 0, 0x70),
        (0x1E00, 0, 0x40),
        (0x1E02, 0, 0x60),
        (0x1602, 0, 0),
        (0x1EB0, 0, 0x70),
        (0x1861, 1, 0x70),
        (0x9300, 0, 0x70),
        (0x9001, 0, 0x70),
        (0x1E22, 0, 0x70),
        (0x9205, 0, 0x70),
    ];
    let mut emu = mx_master_3s();
    let set = get_feature(&mut emu, feature::FEATURE_SET).0;
    for (i, &(id, version, flags)) in recorded.iter().enumerate() {
        let index = i as u8;
        let m = ask_ok(&mut emu, set, 1, &[index]);
        assert_eq!(
            (m.u16_at(0), m.params[3], m.params[2]),
            (id, version, flags),
            "feature set entry {index}"
        );
        if id != 0 {
            assert_eq!(
                get_feature(&mut emu, id),
                (index, flags, version),
                "feature {id:04x}"
            );
        }
    }
}

#[test]
fn feature_set_enumeration_and_root_lookup_agree_on_every_index() {
    for mut emu in [
        mx_master_3s(),
        Emulator::mx_master_3(BLUETOOTH, DEVICE_INDEX_DIRECT),
        Emulator::mx_master_3(RECEIVER, 1),
    ] {
        let set = get_feature(&mut emu, feature::FEATURE_SET).0;
        let count = ask_ok(&mut emu, set, 0, &[]).params[0];
        assert_eq!(usize::from(count) + 1, emu.features().len());
        for i in 0..=count {
            let m = ask_ok(&mut emu, set, 1, &[i]);
            let id = m.u16_at(0);
            assert_eq!(
                get_feature(&mut emu, id),
                (i, m.params[2], m.params[3]),
                "feature {id:04x} at {i}"
            );
        }
        // Past the end: an error, as for any bad argument.
        assert_eq!(ask(&mut emu, set, 1, &[count + 1]).sub_id, HIDPP20_ERROR);
    }
}

#[test]
fn mx_master_3s_controls_are_the_recorded_eight_with_groups_and_the_virtual_gesture_button() {
    use additional_flags::{ANALYTICS_KEY_EVENTS, FORCE_RAW_XY, RAW_XY};
    use info_flags::{DIVERTABLE, MOUSE, PERSISTENTLY_DIVERTABLE, REPROGRAMMABLE, VIRTUAL};
    let mut emu = mx_master_3s();
    let list = control_list(&mut emu);
    let cids: Vec<u16> = list.iter().map(|c| c.cid).collect();
    assert_eq!(
        cids,
        [
            0x0050, 0x0051, 0x0052, 0x0053, 0x0056, 0x00C3, 0x00C4, 0x00D7
        ]
    );
    let tasks: Vec<u16> = list.iter().map(|c| c.task).collect();
    // Left Click, Right Click, Middle, Back, Forward, Gesture Button Navigation, Smart
    // Shift, Virtual Gesture Button (Solaar special_keys.Task).
    assert_eq!(
        tasks,
        [
            0x0038, 0x0039, 0x003A, 0x003C, 0x003E, 0x00A9, 0x009D, 0x00B4
        ]
    );
    // "mse, analytics key events, pos:0, group:1, group mask:g1"
    for c in &list[..2] {
        assert_eq!(
            (c.flags, c.additional_flags, c.pos, c.group, c.group_mask),
            (MOUSE, ANALYTICS_KEY_EVENTS, 0, 1, 0x01)
        );
    }
    // "mse, reprogrammable, divertable, raw XY, analytics key events, pos:0, group:2,
    // group mask:g1,g2"
    for c in &list[2..7] {
        assert_eq!(
            (c.flags, c.additional_flags, c.pos, c.group, c.group_mask),
            (
                MOUSE | REPROGRAMMABLE | DIVERTABLE,
                RAW_XY | ANALYTICS_KEY_EVENTS,
                0,
                2,
                0x03
            ),
            "control {:04x}",
            c.cid
        );
    }
    // "divertable, virtual, raw XY, force raw XY, pos:0, group:3, group mask:empty"
    let v = list[7];
    assert_eq!(
        (v.flags, v.additional_flags, v.group, v.group_mask),
        (DIVERTABLE | VIRTUAL, RAW_XY | FORCE_RAW_XY, 3, 0)
    );
    // The record lists no control as persistently divertable.
    assert!(list.iter().all(|c| c.flags & PERSISTENTLY_DIVERTABLE == 0));
}

#[test]
fn mx_master_3_controls_put_middle_gesture_and_smart_shift_in_group_3() {
    let mut emu = Emulator::mx_master_3(RECEIVER, 1);
    let groups: Vec<(u16, u8, u8)> = control_list(&mut emu)
        .iter()
        .map(|c| (c.cid, c.group, c.group_mask))
        .collect();
    assert_eq!(
        groups,
        [
            (0x0050, 1, 0x01),
            (0x0051, 1, 0x01),
            (0x0052, 3, 0x07),
            (0x0053, 2, 0x03),
            (0x0056, 2, 0x03),
            (0x00C3, 3, 0x07),
            (0x00C4, 3, 0x07),
            (0x00D7, 4, 0x00),
        ]
    );
}

#[test]
fn mx_master_3_behind_a_unifying_receiver_has_the_4082_indices() {
    let mut emu = Emulator::mx_master_3(RECEIVER, 1);
    assert_eq!(emu.features().len(), 34);
    assert_eq!(get_feature(&mut emu, feature::DEVICE_NAME).0, 3);
    assert_eq!(get_feature(&mut emu, feature::WIRELESS_DEVICE_STATUS).0, 4);
    assert_eq!(get_feature(&mut emu, feature::BATTERY_STATUS).0, 8);
    assert_eq!(get_feature(&mut emu, feature::REPROG_CONTROLS_V4).0, 9);
    assert_eq!(get_feature(&mut emu, feature::HIRES_WHEEL).0, 14);
    assert_eq!(get_feature(&mut emu, feature::THUMB_WHEEL).0, 15);
    assert_eq!(get_feature(&mut emu, feature::UNIFIED_BATTERY).0, 0);
    // Over Bluetooth (B023): 30 features, the same indices up to 0x2150.
    let mut bt = Emulator::mx_master_3(BLUETOOTH, DEVICE_INDEX_DIRECT);
    assert_eq!(bt.features().len(), 30);
    assert_eq!(get_feature(&mut bt, feature::HIRES_WHEEL).0, 14);
    assert_eq!(get_feature(&mut bt, 0x9205).0, 29);
}

#[test]
fn hires_wheel_obeys_set_wheel_mode_and_reports_fifteenths_of_a_detent() {
    let mut emu = mx_master_3s();
    let index = get_feature(&mut emu, feature::HIRES_WHEEL).0;
    // "Multiplier: 15", "Has invert", "Has ratchet switch".
    let cap = ask_ok(&mut emu, index, hires_wheel::GET_CAPABILITY, &[]);
    assert_eq!(&cap.params[..2], &[15, 0x0C]);
    // "Low resolution mode", "HID notification" before anyone writes it.
    assert_eq!(
        ask_ok(&mut emu, index, hires_wheel::GET_MODE, &[]).params[0],
        0
    );
    assert_eq!(emu.wheel_counts(2), Some(2));
    // The kernel's probe: setWheelMode(0x02: hi-res, to HID, not inverted).
    ask_ok(&mut emu, index, hires_wheel::SET_MODE, &[0x02]);
    assert_eq!(
        ask_ok(&mut emu, index, hires_wheel::GET_MODE, &[]).params[0],
        0x02
    );
    assert_eq!(emu.wheel_counts(1), Some(15));
    assert_eq!(emu.wheel_counts(-8), Some(-120));
    assert_eq!(
        emu.wheel_counts(9),
        None,
        "135 counts do not fit the 8-bit field"
    );
    // A reconnection: back to low resolution until the driver writes it again.
    emu.reset();
    assert_eq!(emu.wheel_counts(1), Some(1));
    // "Has ratchet switch: Free wheel mode" (3S) / "Normal wheel mode" (3).
    let ratchet = ask_ok(&mut emu, index, hires_wheel::GET_RATCHET_SWITCH, &[]);
    assert_eq!(ratchet.params[0], 0);
    let mut mx3 = Emulator::mx_master_3(RECEIVER, 1);
    let ratchet = ask_ok(&mut mx3, 14, hires_wheel::GET_RATCHET_SWITCH, &[]);
    assert_eq!(ratchet.params[0], 1);
}

#[test]
fn batteries_answer_as_recorded() {
    // 3S: 0x1004 "Battery: 25%, discharging" with a state of charge.
    let mut emu = mx_master_3s();
    let index = get_feature(&mut emu, feature::UNIFIED_BATTERY).0;
    let cap = ask_ok(&mut emu, index, 0, &[]);
    assert_eq!(cap.params[1] & 0x02, 0x02, "state of charge in %");
    let status = ask_ok(&mut emu, index, 1, &[]);
    assert_eq!((status.params[0], status.params[2]), (25, 0));
    // 3: 0x1000 "Battery: 100%, discharging, next level 50%".
    let mut mx3 = Emulator::mx_master_3(RECEIVER, 1);
    let status = ask_ok(&mut mx3, 8, 0, &[]);
    assert_eq!(&status.params[..3], &[100, 50, 0]);
}

#[test]
fn features_the_emulator_does_not_model_answer_invalid_function() {
    let mut emu = mx_master_3s();
    for id in [0x0003, 0x2250, 0x2251, 0x1802, 0x9205] {
        let index = get_feature(&mut emu, id).0;
        let m = ask(&mut emu, index, 0, &[]);
        assert_eq!(
            (m.sub_id, m.address, m.params[1]),
            (HIDPP20_ERROR, index, ERR_INVALID_FUNCTION),
            "feature {id:04x}"
        );
    }
}

#[test]
fn config_change_answers_the_cookie_logiops_reads_at_start_up() {
    // logiops 0.3.1 ("Reset", `hidpp20/features/Reset.cpp`) reads the cookie of 0x0020
    // (index 5 in the recorded table) before it configures the mouse; an error or no
    // answer there ends its set-up of the device.
    let mut emu = mx_master_3s();
    let index = get_feature(&mut emu, 0x0020).0;
    assert_eq!(index, 5);
    assert_eq!(&ask_ok(&mut emu, index, 0, &[]).params[..2], &[0, 0]);
    assert_eq!(
        &ask_ok(&mut emu, index, 1, &[0x12, 0x34]).params[..2],
        &[0x12, 0x34]
    );
}

#[test]
fn a_control_that_cannot_be_diverted_refuses_diversion_but_accepts_its_clearing() {
    use pawl_hidpp::controls::reporting_flags::{DIVERT, DIVERT_VALID, RAW_XY_VALID};
    let mut emu = mx_master_3s();
    let index = get_feature(&mut emu, feature::REPROG_CONTROLS_V4).0;
    // 0x0050, the left button: "mse", not divertable.
    let divert = ask(
        &mut emu,
        index,
        reprog::SET_CID_REPORTING,
        &[0x00, 0x50, DIVERT_VALID | DIVERT],
    );
    assert_eq!(divert.sub_id, HIDPP20_ERROR);
    // logiops 0.3.1 writes "divert off, raw XY off" for every control at start-up.
    let clear = ask_ok(
        &mut emu,
        index,
        reprog::SET_CID_REPORTING,
        &[0x00, 0x50, DIVERT_VALID | RAW_XY_VALID],
    );
    assert_eq!(
        &clear.params[..3],
        &[0x00, 0x50, DIVERT_VALID | RAW_XY_VALID]
    );
    assert!(!emu.reporting(0x0050).unwrap().divert);
}

#[test]
fn mx_master_4_haptics_record_each_play_and_refuse_an_unknown_waveform() {
    let mut emu = Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT);
    let (index, _, _) = get_feature(&mut emu, feature::HAPTIC);
    assert_eq!(index, 11, "index 11 in Solaar's MX Master 4 record");
    let caps = ask_ok(&mut emu, index, feature::haptic::GET_CAPABILITIES, &[]);
    let mask = u32::from_be_bytes([
        caps.params[4],
        caps.params[5],
        caps.params[6],
        caps.params[7],
    ]);
    assert_ne!(mask & (1 << feature::haptic::WAVEFORM_DAMP_STATE_CHANGE), 0);
    let cfg = ask_ok(&mut emu, index, feature::haptic::GET_CONFIG, &[]);
    assert_eq!(cfg.params[..2], emu.haptic_config());
    ask_ok(&mut emu, index, feature::haptic::PLAY, &[1, 0, 0]);
    ask_ok(&mut emu, index, feature::haptic::PLAY, &[4, 0, 0]);
    assert_eq!(emu.haptic_plays(), [1, 4]);
    let refused = ask(&mut emu, index, feature::haptic::PLAY, &[20, 0, 0]);
    assert_eq!(refused.sub_id, HIDPP20_ERROR);
    assert_eq!(emu.haptic_plays(), [1, 4]);
}

#[test]
fn mice_without_haptics_have_no_0x19b0() {
    for mut emu in [
        mx_master_3s(),
        Emulator::mx_master_2s(BLUETOOTH, DEVICE_INDEX_DIRECT),
    ] {
        assert_eq!(get_feature(&mut emu, feature::HAPTIC).0, 0);
    }
}

#[test]
fn mx_master_4_sense_panel_diverted_reports_its_cid_when_pressed() {
    use pawl_hidpp::controls::{CID_SENSE_PANEL, Reporting};
    let mut emu = Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT);
    assert_eq!(
        emu.set_held(CID_SENSE_PANEL, true),
        None,
        "not diverted yet"
    );
    emu.set_held(CID_SENSE_PANEL, false);
    let (reprog_index, _, _) = get_feature(&mut emu, feature::REPROG_CONTROLS_V4);
    let on = Reporting {
        cid: CID_SENSE_PANEL,
        divert: true,
        raw_xy: false,
    };
    ask_ok(
        &mut emu,
        reprog_index,
        reprog::SET_CID_REPORTING,
        &on.params(),
    );
    let m = emu.set_held(CID_SENSE_PANEL, true).expect("diverted");
    assert_eq!(
        (m.sub_id, m.function()),
        (reprog_index, reprog::EVENT_DIVERTED_BUTTONS)
    );
    assert_eq!((m.u16_at(0), m.u16_at(2)), (CID_SENSE_PANEL, 0));
    let m = emu.set_held(CID_SENSE_PANEL, false).unwrap();
    assert_eq!(m.u16_at(0), 0, "released: the list is empty");
}
