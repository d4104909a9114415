//! Golden tests: every recorded stream in `../shared/recordings` (relative to the workspace
//! root) replayed with the default configuration; the notes and summary of each are checked
//! in under `tests/golden/`. `UPDATE_EXPECT=1 cargo test -p pawl-evdev --test golden`
//! rewrites them.

use std::path::{Path, PathBuf};

use pawl_engine::{Config, Platform};
use pawl_evdev::record::{self, Recording};
use pawl_evdev::replay::replay;

use pawl_recordings::dir as recordings_dir;

/// Every replayable stream: `*.events` and `*.json`.
fn streams() -> Vec<PathBuf> {
    let dir = recordings_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "cannot read the recordings at {} ({e}); they live beside the repository in \
             shared/recordings",
            dir.display()
        )
    });
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "events" || x == "json"))
        .collect();
    files.sort();
    files
}

fn load(path: &Path) -> Recording {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rec = record::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().unwrap().to_string_lossy();
    if let Some(desc) = record::evemu_desc_name(&name) {
        let desc_path = path.with_file_name(desc);
        if let Ok(text) = std::fs::read_to_string(&desc_path) {
            rec.describe_with(&record::parse(&text).unwrap());
        }
    }
    rec
}

fn golden_name(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    format!("golden/{}.summary", name.replace(' ', "_"))
}

#[test]
fn every_recording_replays_to_its_checked_in_summary() {
    let config = Config::default_for(Platform::Linux);
    let files = streams();
    assert!(
        files.len() >= 7,
        "expected the recorded streams, found {files:?}"
    );
    for path in files {
        let rec = load(&path);
        let r = replay(&rec, &config, None);
        let mut text = String::new();
        for n in &r.notes {
            text += &format!("# {n}\n");
        }
        text += &r.summary.to_string();
        expect_test::expect_file![golden_name(&path)].assert_eq(&text);
    }
}

#[test]
fn every_checked_in_summary_has_its_recording() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let expected: Vec<String> = streams().iter().map(|p| golden_name(p)).collect();
    for e in std::fs::read_dir(golden).unwrap().flatten() {
        let name = format!("golden/{}", e.file_name().to_string_lossy());
        assert!(
            expected.contains(&name),
            "{name} has no recording: delete it"
        );
    }
}

#[test]
fn the_mx_master_3s_bolt_hires_stream_is_inverted_and_keeps_its_travel() {
    let rec = load(&recordings_dir().join("mx3s-bolt-hires-wheel.events"));
    let config = Config::default_for(Platform::Linux);
    let r = replay(
        &rec,
        &config,
        Some(&pawl_engine::DeviceInfo {
            name: "Logitech MX Master 3S".into(),
            bus: pawl_engine::Bus::USB,
            vendor: 0x046d,
            product: 0xb034,
            has_wheel: true,
            is_touchpad: false,
        }),
    );
    let w = r.summary.wheel;
    assert_eq!(w.v120_in, 176);
    assert!(w.v120_out < 0, "inverted");
    // EMA lag holds back a little at the start of each gesture, never more than it got.
    assert!(
        w.v120_out.abs() <= w.v120_in && w.v120_out.abs() >= w.v120_in * 3 / 4,
        "{w}"
    );
    assert_eq!(w.detents_out, w.v120_out / 120);
}

#[test]
fn the_touchpad_is_never_touched() {
    let path = streams()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("TouchPad"))
        .unwrap();
    let rec = load(&path);
    assert!(
        rec.device.info().unwrap().is_touchpad,
        "identity from the .desc"
    );
    let r = replay(&rec, &Config::default_for(Platform::Linux), None);
    assert_eq!(r.summary.forwarded, r.summary.frames_in);
    let input: Vec<String> = rec.events.iter().map(record::evemu_line).collect();
    assert_eq!(r.lines, input, "bit-exact pass-through");
}
