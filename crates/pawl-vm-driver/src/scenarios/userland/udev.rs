//! udev reading pawl's devices (userland boot): Debian's rules classify the clone as the
//! mouse it copies and the virtual keyboard as a keyboard; `contrib/70-pawl.rules` tags the
//! nodes it is for and no others.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, ensure};
use pawl_evdev::codes::{BTN_LEFT, BTN_RIGHT, MSC_SCAN, REL_WHEEL, REL_X, REL_Y};

use crate::evdev;
use crate::hid::{BOLT_RECEIVER, HidMouse, MX_MASTER_3S_BT};
use crate::scenarios::Scenario;
use crate::scenarios::rig::Rig;
use crate::scenarios::userland_tools::{
    DebugEvents, MX_MASTER_3_USB, SHARE, UdevInfo, hidraw_with_phys, output, settle, udev_info,
};
use crate::scenarios::{Ctx, T_DEVICE};
use crate::sys::InputId;
use crate::uinput::{UinputDevice, UinputSpec};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    udev_classifies_pawl_devices,
    udev_rule_matches_mx_master,
    udev_rule_gives_a_usb_clone_the_hwdb_entry,
    udev_rule_marks_the_virtual_touchpad_external,
];

/// A uinput device with `keys` and `rels`, identified as a USB device of an unknown vendor.
fn uinput_spec(name: &str, phys: String, keys: Vec<u16>, rels: Vec<u16>) -> UinputSpec {
    UinputSpec {
        name: name.into(),
        id: InputId {
            bustype: 0x03,
            vendor: 0x1234,
            product: 0x5678,
            version: 0x0001,
        },
        phys,
        props: Vec::new(),
        keys,
        rels,
        mscs: vec![MSC_SCAN],
        abs: Vec::new(),
    }
}

/// The `ID_INPUT_*` classes udev's `input_id` builtin sets that a mouse clone must never
/// carry (a joystick or keyboard class changes how desktops and libinput treat the node).
const NEVER_ON_A_MOUSE: &[&str] = &[
    "ID_INPUT_JOYSTICK",
    "ID_INPUT_KEYBOARD",
    "ID_INPUT_TOUCHPAD",
    "ID_INPUT_TABLET",
    "ID_INPUT_TOUCHSCREEN",
    "ID_INPUT_ACCELEROMETER",
];

/// `udev_classifies_pawl_devices`: with Debian's udev rules (60-input-id.rules, the
/// `input_id` builtin) pawl's clone of the MX Master is `ID_INPUT_MOUSE` exactly as the
/// mouse is (the same `ID_INPUT*` set), never a joystick, keyboard, touchpad or tablet; the
/// virtual keyboard is `ID_INPUT_KEYBOARD` + `ID_INPUT_KEY` and not a mouse.
pub fn udev_classifies_pawl_devices(ctx: &mut Ctx) -> anyhow::Result<()> {
    let rig = Rig::start(ctx, MX_MASTER_3S_BT, "", "GNOME")?;
    settle()?;
    let mouse = udev_info(&rig.source.path)?;
    let clone = udev_info(&rig.clone.info().path)?;
    let keyboard = udev_info(&rig.keyboard.info().path)?;
    ctx.notes
        .push(format!("mouse: {}", mouse.input_ids().join(" ")));
    ctx.notes
        .push(format!("clone: {}", clone.input_ids().join(" ")));
    ctx.notes.push(format!(
        "virtual keyboard: {}",
        keyboard.input_ids().join(" ")
    ));
    ensure!(
        mouse.is_set("ID_INPUT_MOUSE"),
        "udev does not classify the uhid MX Master itself as a mouse: {:?}",
        mouse.input_ids()
    );
    ensure!(
        clone.is_set("ID_INPUT") && clone.is_set("ID_INPUT_MOUSE"),
        "pawl's clone is not ID_INPUT_MOUSE: {:?}",
        clone.input_ids()
    );
    for class in NEVER_ON_A_MOUSE {
        ensure!(
            !clone.is_set(class),
            "pawl's clone is {class}: {:?}",
            clone.input_ids()
        );
    }
    ensure!(
        clone.input_ids() == mouse.input_ids(),
        "the clone's classes {:?} differ from the mouse's {:?}",
        clone.input_ids(),
        mouse.input_ids()
    );
    ensure!(
        keyboard.is_set("ID_INPUT_KEYBOARD") && keyboard.is_set("ID_INPUT_KEY"),
        "pawl's virtual keyboard is not ID_INPUT_KEYBOARD: {:?}",
        keyboard.input_ids()
    );
    for class in ["ID_INPUT_MOUSE", "ID_INPUT_JOYSTICK", "ID_INPUT_TOUCHPAD"] {
        ensure!(
            !keyboard.is_set(class),
            "pawl's virtual keyboard is {class}: {:?}",
            keyboard.input_ids()
        );
    }
    Ok(())
}

/// `contrib/70-pawl.rules` installed in `/run/udev/rules.d` for the guard's lifetime.
struct InstalledRule(PathBuf);

impl InstalledRule {
    fn install() -> anyhow::Result<InstalledRule> {
        let dir = Path::new("/run/udev/rules.d");
        std::fs::create_dir_all(dir)?;
        let to = dir.join("70-pawl.rules");
        let from = Path::new(SHARE).join("contrib/70-pawl.rules");
        std::fs::copy(&from, &to).with_context(|| format!("copy {}", from.display()))?;
        output(Command::new("udevadm").args(["control", "--reload"]))?;
        Ok(InstalledRule(to))
    }
}

impl Drop for InstalledRule {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = Command::new("udevadm")
            .args(["control", "--reload"])
            .status();
    }
}

/// The hwdb entries [`TestHwdb`] adds: Debian 12's 70-mouse.hwdb has neither emulated
/// mouse (it knows the 3S only as b035, "MX Master 3S B Mouse", and no MX Master 3 behind
/// a receiver), and without an entry a mouse and its clone both have no `MOUSE_*`, so
/// comparing them proves nothing. The Bluetooth 3S (046d:b034, any name:
/// hid-logitech-hidpp names the node "Logitech MX Master 3S") gets the b035 entry's
/// values, the MX Master 3 as hid-generic sees it behind a Unifying receiver (USB
/// 046d:4082, any name) those of the MX Master 2S behind one (4069); each with a wheel click angle
/// so more than one property is compared.
const TEST_HWDB: &str = "\
# pawl VM test: Debian's MX Master 3S B entry, for the emulated 3S (b034).
mouse:bluetooth:v046dpb034:name:*:
 MOUSE_DPI=1000@142
 MOUSE_WHEEL_CLICK_ANGLE=15

# pawl VM test: Debian's MX Master 2S (Unifying) entry, for the emulated MX Master 3 (4082).
mouse:usb:v046dp4082:name:*:
 MOUSE_DPI=1000@125
 MOUSE_WHEEL_CLICK_ANGLE=15
";

/// The `MOUSE_*` properties [`TEST_HWDB`] gives the Bluetooth 3S, as `K=V`.
const TEST_HWDB_PROPS: [&str; 2] = ["MOUSE_DPI=1000@142", "MOUSE_WHEEL_CLICK_ANGLE=15"];

/// The `MOUSE_*` properties [`TEST_HWDB`] gives the USB MX Master 3, as `K=V`.
const TEST_HWDB_USB_PROPS: [&str; 2] = ["MOUSE_DPI=1000@125", "MOUSE_WHEEL_CLICK_ANGLE=15"];

/// `/etc/udev` with [`TEST_HWDB`] added, for as long as the guard lives: a copy of the
/// read-only root's `/etc/udev` in `/run`, bind-mounted over it, where `systemd-hwdb
/// update` compiles Debian's hwdb files and the test entry into `/etc/udev/hwdb.bin` (the
/// first place udevd looks); `udevadm control --reload` makes udevd reopen it. Dropping
/// detaches the mount (lazily: udevd keeps the compiled file mapped until it reloads) and
/// reloads, so Debian's own database is back.
struct TestHwdb(PathBuf);

impl TestHwdb {
    fn install() -> anyhow::Result<TestHwdb> {
        // A directory of its own per install: an earlier one may still be mapped by udevd.
        let copy = PathBuf::from(format!(
            "/run/pawl-test-etc-udev-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&copy)?;
        output(Command::new("cp").args(["-a", "/etc/udev/."]).arg(&copy))?;
        std::fs::create_dir_all(copy.join("hwdb.d"))?;
        std::fs::write(copy.join("hwdb.d/99-pawl-vm-test.hwdb"), TEST_HWDB)?;
        output(
            Command::new("mount")
                .arg("--bind")
                .arg(&copy)
                .arg("/etc/udev"),
        )?;
        let guard = TestHwdb(copy);
        output(Command::new("systemd-hwdb").arg("update"))?;
        output(Command::new("udevadm").args(["control", "--reload"]))?;
        Ok(guard)
    }
}

impl Drop for TestHwdb {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .args(["--lazy", "/etc/udev"])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("cannot unmount the test hwdb from /etc/udev");
        }
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = Command::new("udevadm")
            .args(["control", "--reload"])
            .status();
    }
}

/// The `MOUSE_*` properties (the hwdb lookup of 70-mouse.rules) of a udev entry, as `K=V`.
fn hwdb_props(info: &UdevInfo) -> Vec<String> {
    info.props
        .iter()
        .filter(|(k, _)| k.starts_with("MOUSE_"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// Replays a `change` uevent for `nodes` (so the rules are applied again) and waits until
/// udevd has processed those very events (`--settle`, systemd 248+: a plain `udevadm
/// settle` after `trigger` can return before udevd has even received them from the
/// kernel, and a check then reads the old database entry — seen once on 7.3.4).
fn retrigger(nodes: &[&Path]) -> anyhow::Result<()> {
    let mut cmd = Command::new("udevadm");
    cmd.args(["trigger", "--action=change", "--settle"]);
    for n in nodes {
        cmd.arg(n);
    }
    output(&mut cmd)?;
    settle()
}

/// [`retrigger`] of `node` until its udev entry satisfies `done`, at most
/// [`RETRIGGERS`] change events 1 s apart; returns the last entry read and how many events
/// were sent. Once in CI (7.3.4, Debian 12's udevd 252) the first change event after
/// `udevadm control --reload` left the rule's property unset; the cause is not known (the
/// reload is done when `udevadm control` returns).
fn retrigger_until(
    node: &Path,
    done: impl Fn(&UdevInfo) -> bool,
) -> anyhow::Result<(UdevInfo, u32)> {
    let mut sent = 0;
    loop {
        retrigger(&[node])?;
        sent += 1;
        let info = udev_info(node)?;
        if done(&info) || sent == RETRIGGERS {
            return Ok((info, sent));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// At most this many change events in [`retrigger_until`].
const RETRIGGERS: u32 = 3;

/// `udev_rule_matches_mx_master`: `contrib/70-pawl.rules` (installed in `/run/udev/rules.d`,
/// applied with `udevadm trigger --action=change`) tags with `uaccess`: `/dev/uinput`, the
/// MX Master's pointer node and its hidraw node, pawl's clone (and gives the clone
/// `ID_BUS=bluetooth`; with [`TEST_HWDB`] installed the mouse and the clone have the same
/// `MOUSE_*`, before the rule too: Debian's 60-persistent-input.rules already sets
/// `ID_BUS=bluetooth` from the bus type), the Bolt receiver's pointer node; and no others:
/// not pawl's
/// virtual keyboard, not a keyboard, not a node that is a mouse and a keyboard at once,
/// not the Bolt receiver's hidraw node (receivers are not listed) nor its non-pointer
/// nodes. Before the rule is installed none of them is tagged (the tag is the rule's).
pub fn udev_rule_matches_mx_master(ctx: &mut Ctx) -> anyhow::Result<()> {
    let _hwdb = TestHwdb::install()?;
    let rig = Rig::start(ctx, MX_MASTER_3S_BT, "", "GNOME")?;
    let receiver_phys = ctx.phys("usb");
    let receiver = HidMouse::create(BOLT_RECEIVER, &ctx.recordings, &receiver_phys)?;
    receiver.wait_node(T_DEVICE)?;
    let full_keys: Vec<u16> = (1..=120).collect();
    let kbd = UinputDevice::create(&uinput_spec(
        "Test USB Keyboard",
        ctx.phys("usb-kbd"),
        full_keys.clone(),
        Vec::new(),
    ))?;
    let combo = UinputDevice::create(&uinput_spec(
        "Test Keyboard With Touch Mouse",
        ctx.phys("usb-combo"),
        full_keys.into_iter().chain([BTN_LEFT, BTN_RIGHT]).collect(),
        vec![REL_X, REL_Y, REL_WHEEL],
    ))?;
    let (kbd_node, combo_node) = (kbd.node().to_owned(), combo.node().to_owned());
    let uinput = PathBuf::from("/dev/uinput");
    let mouse = rig.source.path.clone();
    let clone = rig.clone.info().path.clone();
    let keyboard = rig.keyboard.info().path.clone();
    let mouse_hidraw = hidraw_with_phys(&rig.source.phys)?;
    let receiver_hidraw = hidraw_with_phys(&receiver_phys)?;
    let receiver_nodes: Vec<PathBuf> = evdev::scan()
        .into_iter()
        .filter(|n| n.phys == receiver_phys)
        .map(|n| n.path)
        .collect();
    let mut all: Vec<&Path> = vec![
        &uinput,
        &mouse,
        &clone,
        &keyboard,
        &mouse_hidraw,
        &receiver_hidraw,
        &kbd_node,
        &combo_node,
    ];
    all.extend(receiver_nodes.iter().map(PathBuf::as_path));

    // /dev/uinput outlives every scenario: its entry may still carry the tags of a rule
    // installed before, until the next event; one is sent, with Debian's rules alone.
    retrigger(&all)?;
    for node in &all {
        let info = udev_info(node)?;
        ensure!(
            !info.tagged("uaccess"),
            "{} is tagged uaccess before the rule is installed: {:?}",
            node.display(),
            info.tags
        );
    }
    let mouse_before = udev_info(&mouse)?;
    let mouse_hwdb = hwdb_props(&mouse_before);
    ensure!(
        mouse_hwdb == TEST_HWDB_PROPS,
        "the test hwdb entry does not match the emulated MX Master (ID_BUS {:?}, NAME {:?}): its MOUSE_* are {mouse_hwdb:?}, want {TEST_HWDB_PROPS:?}",
        mouse_before.props.get("ID_BUS"),
        mouse_before.props.get("NAME")
    );
    // Debian's 60-persistent-input.rules sets ID_BUS=bluetooth from the bus type alone,
    // so a Bluetooth clone has the mouse's hwdb entry even without pawl's rule.
    let clone_before = hwdb_props(&udev_info(&clone)?);
    ensure!(
        clone_before == mouse_hwdb,
        "before the rule, pawl's Bluetooth clone has MOUSE_* {clone_before:?}, the mouse {mouse_hwdb:?}"
    );

    let _rule = InstalledRule::install()?;
    retrigger(&all)?;
    let mut seen = Vec::new();
    let mut check = |node: &Path, what: &str, want: bool| -> anyhow::Result<UdevInfo> {
        let info = udev_info(node)?;
        seen.push(format!("{what} {}: tags {:?}", node.display(), info.tags));
        ensure!(
            info.tagged("uaccess") == want,
            "{what} {} {} tagged uaccess by 70-pawl.rules (tags {:?}, {})",
            node.display(),
            if want { "is not" } else { "is" },
            info.tags,
            info.input_ids().join(" ")
        );
        Ok(info)
    };
    check(&uinput, "/dev/uinput", true)?;
    let mouse_info = check(&mouse, "the MX Master's pointer node", true)?;
    let clone_info = check(&clone, "pawl's clone", true)?;
    check(&keyboard, "pawl's virtual keyboard", false)?;
    check(&mouse_hidraw, "the MX Master's hidraw node", true)?;
    check(&receiver_hidraw, "the Bolt receiver's hidraw node", false)?;
    let kbd_info = check(&kbd_node, "a USB keyboard", false)?;
    let combo_info = check(&combo_node, "a mouse that is also a keyboard", false)?;
    let mut receiver_pointers = 0;
    for node in &receiver_nodes {
        let info = udev_info(node)?;
        let pointer = (info.is_set("ID_INPUT_MOUSE") || info.is_set("ID_INPUT_TOUCHPAD"))
            && !info.is_set("ID_INPUT_KEYBOARD");
        receiver_pointers += usize::from(pointer);
        check(node, "a Bolt receiver node", pointer)?;
    }
    ctx.notes.extend(seen);
    ensure!(
        kbd_info.is_set("ID_INPUT_KEYBOARD")
            && combo_info.is_set("ID_INPUT_KEYBOARD")
            && combo_info.is_set("ID_INPUT_MOUSE"),
        "the test keyboard ({}) or mouse+keyboard ({}) is not classified as meant: the 'no keyboards' half is untested",
        kbd_info.input_ids().join(" "),
        combo_info.input_ids().join(" ")
    );
    ensure!(
        receiver_pointers == 1,
        "{receiver_pointers} of the Bolt receiver's nodes {receiver_nodes:?} are pointers (want 1)"
    );
    ensure!(
        clone_info.props.get("ID_BUS").map(String::as_str) == Some("bluetooth"),
        "the rule gives the clone no ID_BUS=bluetooth: {:?}",
        clone_info.props.get("ID_BUS")
    );
    let clone_hwdb = hwdb_props(&clone_info);
    ensure!(
        clone_hwdb == hwdb_props(&mouse_info) && clone_hwdb == TEST_HWDB_PROPS,
        "the clone's hwdb properties {clone_hwdb:?} differ from the mouse's {:?}",
        hwdb_props(&mouse_info)
    );
    ctx.notes.push(format!(
        "mouse hwdb {:?}, clone hwdb before the rule {clone_before:?}, after {clone_hwdb:?}",
        hwdb_props(&mouse_info)
    ));
    drop((receiver, kbd, combo));
    Ok(())
}

/// `udev_rule_gives_a_usb_clone_the_hwdb_entry`: a clone of a USB mouse hangs off the
/// virtual bus, where Debian's rules give it no `ID_BUS` and so no hwdb lookup (no
/// `MOUSE_DPI`, no wheel click angle: libinput then guesses). `contrib/70-pawl.rules` sets
/// `ID_BUS=usb` from the clone's bus type and does the lookup: with [`TEST_HWDB`]
/// installed the clone of the MX Master 3 (USB 046d:4082) has no `MOUSE_*` before the rule
/// and exactly the entry's after. (The uhid mouse itself is not on the USB subsystem in
/// the VM, so it has no `ID_BUS` either; on a user's machine `usb_id` gives it one.)
pub fn udev_rule_gives_a_usb_clone_the_hwdb_entry(ctx: &mut Ctx) -> anyhow::Result<()> {
    let _hwdb = TestHwdb::install()?;
    let mut rig = Rig::start(ctx, MX_MASTER_3_USB, "", "GNOME")?;
    let clone = rig.clone.info().path.clone();
    retrigger(&[&clone])?;
    let before = udev_info(&clone)?;
    ensure!(
        hwdb_props(&before).is_empty() && !before.props.contains_key("ID_BUS"),
        "before the rule the USB clone has ID_BUS {:?} and MOUSE_* {:?}: the rule would not be what gives them",
        before.props.get("ID_BUS"),
        hwdb_props(&before)
    );
    let _rule = InstalledRule::install()?;
    let (after, triggers) = retrigger_until(&clone, |i| !hwdb_props(i).is_empty())?;
    ctx.notes.push(format!(
        "USB clone after the rule ({triggers} change events): ID_BUS {:?}, {:?}",
        after.props.get("ID_BUS"),
        hwdb_props(&after)
    ));
    ensure!(
        after.props.get("ID_BUS").map(String::as_str) == Some("usb"),
        "the rule gives the USB clone ID_BUS {:?} (want usb)",
        after.props.get("ID_BUS")
    );
    ensure!(
        hwdb_props(&after) == TEST_HWDB_USB_PROPS,
        "the USB clone's MOUSE_* after the rule are {:?}, want {TEST_HWDB_USB_PROPS:?}",
        hwdb_props(&after)
    );
    rig.stop()
}

/// `udev_rule_marks_the_virtual_touchpad_external`: swipe style's virtual touchpad is on the
/// virtual bus with no vendor, so libinput's fallback (`evdev_tag_touchpad`: anything not
/// Bluetooth and not Logitech or Wacom is internal) would take it for a laptop's built-in
/// touchpad, pair it with the lid switch (suspended while the lid is closed: a docked
/// laptop, the usual place for an MX Master), tablet mode and disable-while-typing.
/// `contrib/70-pawl.rules` sets `ID_INPUT_TOUCHPAD_INTEGRATION=external`, which libinput
/// reads before its fallback; Debian's rules alone leave it unset. The touchpad stays
/// tagged uaccess (a pointer) and classified `ID_INPUT_TOUCHPAD`. Checked in libinput
/// too: its `DEVICE_ADDED` line offers disable-while-typing (`dwt-on`, an internal
/// touchpad's: `tp_init_dwt` skips external ones) without the rule, and no `dwt` with it.
pub fn udev_rule_marks_the_virtual_touchpad_external(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (_rig, pad) = crate::scenarios::base::swipe::start(
        ctx,
        crate::scenarios::base::swipe::SWIPE_CONFIG,
        "GNOME",
    )?;
    let node = pad.info().path.clone();
    settle()?;
    let before = udev_info(&node)?;
    ensure!(
        before.is_set("ID_INPUT_TOUCHPAD"),
        "Debian's rules do not classify the virtual touchpad as a touchpad: {}",
        before.input_ids().join(" ")
    );
    ensure!(
        !before.props.contains_key("ID_INPUT_TOUCHPAD_INTEGRATION"),
        "ID_INPUT_TOUCHPAD_INTEGRATION={:?} before pawl's rule is installed (the check would prove nothing)",
        before.props.get("ID_INPUT_TOUCHPAD_INTEGRATION")
    );
    let internal = libinput_device_added(&node)?;
    ensure!(
        internal.contains(" dwt-on"),
        "without the rule libinput does not take the virtual touchpad for an internal one \
         (no dwt-on; the check would prove nothing): {internal}"
    );
    let _rule = InstalledRule::install()?;
    let (after, triggers) = retrigger_until(&node, |i| {
        i.props.contains_key("ID_INPUT_TOUCHPAD_INTEGRATION")
    })?;
    if triggers > 1 {
        println!(
            "# udev_rule_marks_the_virtual_touchpad_external: udevd applied the reloaded \
             rules only at change event {triggers}"
        );
    }
    ensure!(
        after
            .props
            .get("ID_INPUT_TOUCHPAD_INTEGRATION")
            .map(String::as_str)
            == Some("external"),
        "70-pawl.rules leaves the virtual touchpad's integration at {:?}",
        after.props.get("ID_INPUT_TOUCHPAD_INTEGRATION")
    );
    ensure!(
        after.is_set("ID_INPUT_TOUCHPAD") && after.tagged("uaccess"),
        "the virtual touchpad lost its class or access: {} tags {:?}",
        after.input_ids().join(" "),
        after.tags
    );
    let external = libinput_device_added(&node)?;
    ensure!(
        !external.contains(" dwt"),
        "with the rule libinput still offers disable-while-typing (an internal touchpad): \
         {external}"
    );
    ctx.notes.push(format!(
        "{}: ID_INPUT_TOUCHPAD_INTEGRATION=external with the rule, unset without; libinput \
         without: {internal}; with: {external}",
        node.display()
    ));
    Ok(())
}

/// libinput's `DEVICE_ADDED` line for `node` (`libinput debug-events`, path backend, which
/// reads the node's udev properties as the desktop's udev backend does).
fn libinput_device_added(node: &Path) -> anyhow::Result<String> {
    let li = DebugEvents::start(node)?;
    li.lines()
        .into_iter()
        .find(|l| l.contains("DEVICE_ADDED"))
        .context("no DEVICE_ADDED line")
}
