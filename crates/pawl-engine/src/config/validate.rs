//! The walker: toml's spanned document tree walked by hand into a [`Config`], reporting
//! every problem — unknown key, wrong type, out of range, contradiction — at the exact key
//! or value, in the user's words, and all of them in one run.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::*;
use crate::action::{Action, BUILTIN_ACTIONS, Chord, Desktop, Key};
use crate::device::{Bus, DeviceMatcher};
use crate::platform::Platform;
use crate::text::{clip, quoted};
use crate::units::Button;

/// [`Config::parse`]: every problem, located.
pub(super) fn parse(text: &str, file: &str, platform: Platform) -> Result<Config, ConfigErrors> {
    let located = |span: Option<Range<usize>>, key: &str, message: String| {
        let (line, column) = span.map_or((1, 1), |s| line_col(text, s.start));
        ConfigError {
            file: file.to_owned(),
            line,
            column,
            key: key.to_owned(),
            message,
        }
    };
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigErrors(vec![located(
            None,
            "",
            format!(
                "the config is larger than the {} limit ({} bytes)",
                MAX_CONFIG_SIZE,
                text.len()
            ),
        )]));
    }
    let (doc, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        // The document is broken: report every syntax error, check nothing else (a
        // recovered document would only add confusing follow-up errors).
        let mut errors: Vec<ConfigError> = syntax
            .iter()
            .map(|e| {
                let mut message = e.message().trim().replace('\n', " ");
                let what = e.span().and_then(|s| text.get(s)).unwrap_or("");
                if message == "duplicate key" && !what.is_empty() {
                    message = format!(
                        "duplicate key `{}`: each key and table may appear once",
                        clip(what)
                    );
                } else if message.contains("max recursion depth") {
                    message = "arrays or inline tables are nested too deeply".into();
                }
                located(e.span(), "", message)
            })
            .collect();
        errors.dedup_by(|a, b| a.line == b.line && a.message == b.message);
        return Err(ConfigErrors(errors));
    }
    let mut v = Validator {
        text,
        file,
        platform,
        errors: Vec::new(),
        config: Config::default_for(platform),
        drag_keys: Vec::new(),
    };
    v.apply(doc.get_ref());
    v.errors.sort_by_key(|e| (e.line, e.column));
    if v.errors.is_empty() {
        Ok(v.config)
    } else {
        Err(ConfigErrors(v.errors))
    }
}

/// 1-based (line, column) of byte offset `pos` in `text`.
pub(super) fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
type Item<'i> = Spanned<DeValue<'i>>;
type Span = Range<usize>;

/// `"a string \"220\""`, `"an integer (5)"`: what a value is, for type errors.
fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => format!("a string {}", quoted(s)),
        DeValue::Integer(i) => format!("an integer ({})", integer_shown(i)),
        DeValue::Float(f) => format!(
            "a number ({})",
            crate::text::number(f.as_str(), f.as_str().parse().unwrap_or(f64::NAN))
        ),
        DeValue::Boolean(b) => format!("a boolean ({b})"),
        DeValue::Datetime(d) => format!("a date-time ({d})"),
        DeValue::Array(_) => "an array".into(),
        DeValue::Table(_) => "a table".into(),
    }
}

/// A TOML integer as written, or in scientific notation when it is long.
fn integer_shown(i: &toml::de::DeInteger<'_>) -> String {
    let written = i.to_string();
    let value = i64::from_str_radix(i.as_str(), i.radix())
        .map(|n| n as f64)
        .unwrap_or_else(|_| i.as_str().parse().unwrap_or(f64::NAN));
    crate::text::number(&written, value)
}

/// `path.key`, or `key` at the top level.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The value of `key` in `t`.
fn get<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a Item<'i>> {
    t.get(key)
}

/// The entries of `t` in the order the file has them (toml's map is sorted by key).
fn in_file_order<'a, 'i>(t: &'a DeTable<'i>) -> Vec<(&'a Spanned<DeString<'i>>, &'a Item<'i>)> {
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// The error for a device name `""`: the glob would match only a device without a name.
const EMPTY_DEVICE_NAME: &str =
    "the name is empty: give a pattern like \"*MX Master*\" (name = \"*\" means every device)";

/// `style`'s values in `[gesture]` and `[app.gesture]`, and where each works (swipe needs
/// the Linux virtual touchpad).
const GESTURE_STYLES: [(&str, GestureStyle, Option<Platform>); 2] = [
    ("shortcut", GestureStyle::Shortcut, None),
    ("swipe", GestureStyle::Swipe, Some(Platform::Linux)),
];

/// The keys of `[scroll]` but `scope`: `[device.scroll]` and `[app.scroll]` take them too.
const SCROLL_KEYS: &[&str] = &[
    "invert_vertical",
    "invert_horizontal",
    "smoothing",
    "smoothing_factor",
    "max_step",
    "spike_ratio",
    "gesture_gap_ms",
    "inertia",
    "carry_limit",
    "glide_decay",
    "glide_interval_ms",
];

/// The keys of an `[[app]]` table itself (its sub-tables refuse them with a hint).
const APP_TABLE_KEYS: &[&str] = &["app_id", "title", "device"];

/// Where a button setting came from: the span of its value, `None` for the default.
type Origin = Option<Span>;

/// The keys of `[hidpp]` (the global ones and the mouse's own settings, which
/// `[device.hidpp]` takes too).
const HIDPP_KEYS: &[&str] = &[
    "enabled",
    "thumb_wheel",
    "kernel_mode",
    "dpi",
    "smartshift",
    "thumb_wheel_invert",
    "sense_panel",
    "haptic_on_gesture",
];

struct Validator<'a> {
    text: &'a str,
    file: &'a str,
    platform: Platform,
    errors: Vec<ConfigError>,
    config: Config,
    /// The drag actions (left, right, up, down) each `[[app]]` table sets: the index of its
    /// rule in `config.apps`, the table's path, and each key's name and span. Checked once
    /// every table is read ([`Validator::check_drag_styles`]): styles layer across tables.
    drag_keys: Vec<DragKeys>,
}

/// One `[[app]]` table's drag actions: its rule's index in `config.apps`, its
/// `[app.gesture]` path, and each key's name and span.
type DragKeys = (usize, String, Vec<(&'static str, Span)>);

impl Validator<'_> {
    fn error(&mut self, span: Span, key: &str, message: String) {
        let (line, column) = line_col(self.text, span.start);
        self.errors.push(ConfigError {
            file: self.file.to_owned(),
            line,
            column,
            key: clip(key),
            message,
        });
    }

    /// `line N` of a span, or `default` for a setting not in the file.
    fn origin(&self, o: &Origin) -> String {
        match o {
            Some(span) => format!("line {}", line_col(self.text, span.start).0),
            None => "default".to_owned(),
        }
    }

    fn wrong_type(&mut self, v: &Item<'_>, key: &str, expected: &str) {
        let found = describe(v.get_ref());
        self.error(v.span(), key, format!("expected {expected}, found {found}"));
    }

    /// Reports every key of `t` not in `allowed`, at the key.
    fn known_keys(&mut self, t: &DeTable<'_>, path: &str, allowed: &[&str]) {
        self.known_keys_but(t, path, allowed, &[]);
    }

    /// [`Self::known_keys`], leaving out the keys in `refused`: they get their own error,
    /// and the list of allowed keys does not name them.
    fn known_keys_but(&mut self, t: &DeTable<'_>, path: &str, allowed: &[&str], refused: &[&str]) {
        for (k, _) in t.iter() {
            let name = k.get_ref().as_ref();
            if !allowed.contains(&name) && !refused.contains(&name) {
                self.error(
                    k.span(),
                    &join(path, k.get_ref()),
                    format!("unknown key: allowed {}", allowed.join(", ")),
                );
            }
        }
    }

    /// The table at `key` of `t` (`None`, with an error, when it is something else).
    fn table<'t, 'i>(
        &mut self,
        t: &'t DeTable<'i>,
        path: &str,
        key: &str,
    ) -> Option<&'t DeTable<'i>> {
        let v = get(t, key)?;
        match v.get_ref() {
            DeValue::Table(inner) => Some(inner),
            _ => {
                let name = join(path, key);
                self.wrong_type(v, &name, &format!("a table ([{name}])"));
                None
            }
        }
    }

    fn bool(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<bool> {
        let v = get(t, key)?;
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.wrong_type(v, &join(path, key), "true or false");
                None
            }
        }
    }

    fn string<'t>(&mut self, t: &'t DeTable<'_>, path: &str, key: &str) -> Option<(&'t str, Span)> {
        let v = get(t, key)?;
        match v.get_ref() {
            DeValue::String(s) => Some((s.as_ref(), v.span())),
            _ => {
                self.wrong_type(v, &join(path, key), "a string");
                None
            }
        }
    }

    /// An integer in `lo..=hi`; `what` names the unit for type errors (`px`), `unit` is
    /// appended to the range in range errors (` px`).
    #[allow(clippy::too_many_arguments)]
    fn int(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        (lo, hi): (i64, i64),
        what: &str,
        unit: &str,
    ) -> Option<(i64, Span)> {
        let v = get(t, key)?;
        let name = join(path, key);
        let DeValue::Integer(i) = v.get_ref() else {
            self.wrong_type(v, &name, &format!("an integer ({what})"));
            return None;
        };
        match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) if (lo..=hi).contains(&n) => Some((n, v.span())),
            _ => {
                self.error(
                    v.span(),
                    &name,
                    format!(
                        "{} is out of range: allowed {lo}..={hi}{unit}",
                        integer_shown(i)
                    ),
                );
                None
            }
        }
    }

    /// A number (integer or float) checked by `ok`; `allowed` describes the range.
    fn number(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        what: &str,
        ok: impl Fn(f64) -> bool,
        allowed: &str,
    ) -> Option<f64> {
        let v = get(t, key)?;
        let name = join(path, key);
        let n = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(|n| n as f64)
                .unwrap_or(f64::INFINITY),
            DeValue::Float(f) => f.as_str().parse::<f64>().unwrap_or(f64::NAN),
            _ => {
                self.wrong_type(v, &name, &format!("a number ({what})"));
                return None;
            }
        };
        if n.is_finite() && ok(n) {
            Some(n)
        } else {
            let shown = match v.get_ref() {
                DeValue::Integer(i) => integer_shown(i),
                DeValue::Float(_) => crate::text::number(&n.to_string(), n),
                _ => n.to_string(),
            };
            self.error(
                v.span(),
                &name,
                format!("{shown} is out of range: allowed {allowed}"),
            );
            None
        }
    }

    /// A number in `lo..=hi`.
    #[allow(clippy::too_many_arguments)]
    fn float(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        (lo, hi): (f64, f64),
        what: &str,
        unit: &str,
    ) -> Option<f32> {
        self.number(
            t,
            path,
            key,
            what,
            |n| n >= lo && n <= hi,
            &format!("{lo}..={hi}{unit}"),
        )
        .map(|n| n as f32)
    }

    /// The button a `map` key names (`"0"`..=the platform's last button), or an error at
    /// the key and `None`.
    fn button_key(&mut self, k: &Spanned<DeString<'_>>, key: &str) -> Option<Button> {
        let max = self.platform.max_button();
        match k.get_ref().parse::<u8>() {
            Ok(n) if n <= max => Some(Button(n)),
            _ => {
                self.error(
                    k.span(),
                    key,
                    format!(
                        "{} is not a button number: allowed 0..={max} on {}",
                        quoted(k.get_ref()),
                        self.platform.name()
                    ),
                );
                None
            }
        }
    }

    /// A 0-based button number in this platform's range.
    fn button(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<(Button, Span)> {
        let max = self.platform.max_button();
        let unit = match self.platform {
            Platform::Linux => {
                " on Linux (0-based: code - BTN_MOUSE for codes BTN_MOUSE..BTN_JOYSTICK)"
            }
            Platform::MacOs => " on macOS (the CGEvent button number)",
        };
        self.int(
            t,
            path,
            key,
            (0, i64::from(max)),
            "a 0-based button number",
            unit,
        )
        .map(|(n, span)| (Button(n as u8), span))
    }

    /// A string out of `options` (`(spelling, value, platforms where it is allowed)`).
    fn choice<T: Copy>(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        options: &[(&str, T, Option<Platform>)],
    ) -> Option<T> {
        let (value, span) = self.string(t, path, key)?;
        let here = |p: &Option<Platform>| p.is_none_or(|p| p == self.platform);
        let allowed: Vec<String> = options
            .iter()
            .filter(|(_, _, p)| here(p))
            .map(|(n, _, _)| format!("\"{n}\""))
            .collect();
        let allowed = allowed.join(", ");
        match options.iter().find(|(n, _, _)| *n == value) {
            Some((_, v, p)) if here(p) => Some(*v),
            Some(_) => {
                let other = match self.platform {
                    Platform::Linux => "macOS",
                    Platform::MacOs => "Linux",
                };
                let this = self.platform.name();
                self.error(
                    span,
                    &join(path, key),
                    format!(
                        "{} only works on {other}: allowed on {this} {allowed}",
                        quoted(value)
                    ),
                );
                None
            }
            None => {
                self.error(
                    span,
                    &join(path, key),
                    format!("unknown value {}: allowed {allowed}", quoted(value)),
                );
                None
            }
        }
    }

    /// Parses a chord and checks that this platform can press every key of it.
    fn chord(&mut self, text: &str, span: Span, key: &str) -> Option<u16> {
        let chord = match Chord::parse(text) {
            Ok(c) => c,
            Err(m) => {
                self.error(span, key, m);
                return None;
            }
        };
        if let Some(k) = chord.0.iter().find(|k| !k.available_on(self.platform)) {
            let why = match (self.platform, k) {
                (Platform::Linux, Key::Fn) => {
                    "Fn has no key code on Linux (the keyboard's firmware handles it)".to_owned()
                }
                (
                    Platform::MacOs,
                    Key::AudioMute | Key::AudioLowerVolume | Key::AudioRaiseVolume,
                ) => {
                    format!(
                        "{} is a media key on macOS (an NSSystemDefined event, not a key code), \
                         which pawl cannot post; run a command instead, e.g. [\"osascript\", \"-e\", \
                         \"set volume output volume (output volume of (get volume settings) + 6)\"]",
                        k.name()
                    )
                }
                (p, k) => format!("{} has no key code on {}", k.name(), p.name()),
            };
            self.error(span, key, format!("chord {}: {why}", quoted(text)));
            return None;
        }
        self.config.chords.push(chord);
        Some((self.config.chords.len() - 1) as u16)
    }

    /// A `command` value: a non-empty array of strings, the program first; at most
    /// [`MAX_COMMAND_ARGS`] strings of at most [`MAX_COMMAND_ARG_BYTES`] bytes, none with a
    /// NUL byte (`exec` would end the string there).
    fn argv(&mut self, v: &Item<'_>, key: &str) -> Option<u16> {
        let usage = "a command is a non-empty array of strings: [\"program\", \"arg\", …]";
        let DeValue::Array(items) = v.get_ref() else {
            self.error(v.span(), key, usage.into());
            return None;
        };
        if items.len() > MAX_COMMAND_ARGS {
            self.error(
                v.span(),
                key,
                format!(
                    "a command of {} strings: at most {MAX_COMMAND_ARGS} (program and arguments)",
                    items.len()
                ),
            );
            return None;
        }
        let mut argv = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Some(arg) = item.get_ref().as_str() else {
                self.error(v.span(), key, usage.into());
                return None;
            };
            let problem = if arg.contains('\0') {
                Some("contains a NUL byte, which no program can receive (exec ends the string there)".to_owned())
            } else if arg.len() > MAX_COMMAND_ARG_BYTES {
                Some(format!(
                    "is {} bytes long: at most {MAX_COMMAND_ARG_BYTES}",
                    arg.len()
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                self.error(
                    item.span(),
                    &format!("{key}[{i}]"),
                    format!("{} {problem}", quoted(arg)),
                );
                return None;
            }
            argv.push(arg.to_owned());
        }
        if argv.first().is_none_or(|p| p.is_empty()) {
            self.error(v.span(), key, usage.into());
            return None;
        }
        self.config.commands.push(argv);
        Some((self.config.commands.len() - 1) as u16)
    }

    /// An action value: a built-in name, `{ key = "…" }` or `{ command = [argv…] }`.
    fn action(&mut self, v: &Item<'_>, key: &str) -> Option<Action> {
        let builtin_names = || {
            BUILTIN_ACTIONS
                .iter()
                .map(|a| format!("\"{}\"", a.name().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match v.get_ref() {
            DeValue::String(s) => match Action::from_name(s) {
                Some(a) => Some(a),
                None => {
                    let msg = format!(
                        "unknown action {}: allowed {}, {{ key = \"Super+Page_Up\" }}, {{ command = [\"prog\", \"arg\"] }}",
                        quoted(s),
                        builtin_names()
                    );
                    self.error(v.span(), key, msg);
                    None
                }
            },
            DeValue::Table(t) if t.len() == 1 && t.contains_key("key") => {
                let chord = &t["key"];
                match chord.get_ref() {
                    DeValue::String(s) => self.chord(s, chord.span(), key).map(Action::Key),
                    _ => {
                        self.wrong_type(chord, &join(key, "key"), "a chord like \"Super+Page_Up\"");
                        None
                    }
                }
            }
            DeValue::Table(t) if t.len() == 1 && t.contains_key("command") => self
                .argv(&t["command"], &join(key, "command"))
                .map(Action::Command),
            _ => {
                let msg = format!(
                    "an action is one of {}, {{ key = \"…\" }} or {{ command = [\"prog\", …] }}",
                    builtin_names()
                );
                self.error(v.span(), key, msg);
                None
            }
        }
    }

    /// The action at `key` of `t`, with where it was written.
    fn action_at(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<(Action, Span)> {
        let v = get(t, key)?;
        self.action(v, &join(path, key)).map(|a| (a, v.span()))
    }

    /// The scroll keys of `[scroll]` or a `[device.scroll]`.
    fn scroll_keys(&mut self, t: &DeTable<'_>, path: &str) -> ScrollOverrides {
        let gap = self.int(t, path, "gesture_gap_ms", (10, 10_000), "ms", " ms");
        let interval = self.int(t, path, "glide_interval_ms", (4, 100), "ms", " ms");
        ScrollOverrides {
            invert_vertical: self.bool(t, path, "invert_vertical"),
            invert_horizontal: self.bool(t, path, "invert_horizontal"),
            ema: self.choice(
                t,
                path,
                "smoothing",
                &[("ema", true, None), ("none", false, None)],
            ),
            smoothing_factor: self.float(
                t,
                path,
                "smoothing_factor",
                (0.01, 1.0),
                "0.01..=1.0",
                "",
            ),
            max_step: self.float(t, path, "max_step", (0.1, 100.0), "detents", " detents"),
            spike_ratio: self
                .number(
                    t,
                    path,
                    "spike_ratio",
                    "a ratio",
                    |r| r == 0.0 || (1.0..=100.0).contains(&r),
                    "0 (off) or 1..=100",
                )
                .map(|r| r as f32),
            gesture_gap_us: gap.map(|(g, _)| g as u64 * 1000),
            inertia: self.choice(
                t,
                path,
                "inertia",
                &[
                    ("off", InertiaMode::Off, None),
                    ("carry", InertiaMode::Carry, None),
                    ("glide", InertiaMode::Glide, None),
                ],
            ),
            carry_limit: self.float(t, path, "carry_limit", (0.0, 50.0), "detents", " detents"),
            glide_decay: self.float(t, path, "glide_decay", (0.05, 0.99), "0.05..=0.99", ""),
            glide_interval_us: interval.map(|(i, _)| i as u64 * 1000),
        }
    }

    /// The device-name pattern at `t.key`: a non-empty string. Errors on `""`, which
    /// would match only a device that reports no name.
    fn device_name(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<String> {
        let (name, span) = self.string(t, path, key)?;
        if name.is_empty() {
            self.error(span, &join(path, key), EMPTY_DEVICE_NAME.into());
            return None;
        }
        Some(name.to_owned())
    }

    /// The `name`, `id` and `bus` of a `[[device]]` rule or a scope matcher.
    fn matcher(&mut self, t: &DeTable<'_>, path: &str) -> DeviceMatcher {
        let mut m = DeviceMatcher {
            name: self.device_name(t, path, "name"),
            ..Default::default()
        };
        if let Some((id, span)) = self.string(t, path, "id") {
            match parse_id(id) {
                Some((v, p)) => {
                    m.vendor = Some(v);
                    m.product = p;
                }
                None => self.error(
                    span,
                    &join(path, "id"),
                    format!("{} is not a device id: use \"vvvv:pppp\" or \"vvvv\" in hex, e.g. \"046d:b034\"", quoted(id)),
                ),
            }
        }
        if let Some((b, span)) = self.string(t, path, "bus") {
            match Bus::parse(b) {
                Some(bus) => m.bus = Some(bus),
                None => self.error(
                    span,
                    &join(path, "bus"),
                    format!("unknown bus {}: allowed \"usb\", \"bluetooth\", \"i2c\", \"i8042\", \"virtual\" or a number", quoted(b)),
                ),
            }
        }
        m
    }

    fn apply(&mut self, doc: &DeTable<'_>) {
        self.known_keys(
            doc,
            "",
            &[
                "gesture", "buttons", "actions", "scroll", "hidpp", "device", "app",
            ],
        );
        if let Some(h) = self.table(doc, "", "hidpp") {
            self.hidpp(h);
        }
        let mut origins = ButtonOrigins::default();
        if let Some(g) = self.table(doc, "", "gesture") {
            self.gesture(g, &mut origins);
        }
        if let Some(b) = self.table(doc, "", "buttons") {
            self.buttons(b, &mut origins);
        }
        self.check_buttons(&origins);
        if let Some(h) = self.table(doc, "", "hidpp") {
            self.check_sense_panel(h);
            self.settings_need_hidpp(h, "hidpp");
        }
        if let Some(a) = self.table(doc, "", "actions") {
            self.actions(a);
        }
        if let Some(s) = self.table(doc, "", "scroll") {
            self.scroll(s);
        }
        if let Some(d) = get(doc, "device") {
            match d.get_ref() {
                DeValue::Array(rules) if rules.iter().all(|r| r.get_ref().is_table()) => {
                    for (i, rule) in rules.iter().enumerate() {
                        if let DeValue::Table(t) = rule.get_ref() {
                            self.device(t, i, rule.span());
                        }
                    }
                }
                _ => self.wrong_type(d, "device", "[[device]] tables"),
            }
        }
        if let Some(a) = get(doc, "app") {
            match a.get_ref() {
                DeValue::Array(tables) if tables.iter().all(|r| r.get_ref().is_table()) => {
                    if let Some(over) = tables.get(MAX_APP_TABLES) {
                        // At the first table over the limit: `a`'s span is the first table.
                        self.error(
                            over.span(),
                            "app",
                            format!("{} [[app]] tables: at most {MAX_APP_TABLES}", tables.len()),
                        );
                    }
                    for (i, table) in tables.iter().take(MAX_APP_TABLES).enumerate() {
                        if let DeValue::Table(t) = table.get_ref() {
                            self.app(t, i, table.span());
                        }
                    }
                    self.check_drag_styles();
                }
                _ => self.wrong_type(a, "app", "[[app]] tables"),
            }
            let mut ids: Vec<String> = self
                .config
                .apps
                .iter()
                .flat_map(|r| r.app_ids.iter().cloned())
                .collect();
            ids.sort();
            ids.dedup();
            self.config.app_ids = ids;
            self.config.app_first_key = app_first_keys(&self.config);
        }
    }

    /// One `[[app]]` table.
    fn app(&mut self, t: &DeTable<'_>, i: usize, span: Span) {
        let path = format!("app[{i}]");
        let allowed = ["app_id", "title", "device", "scroll", "gesture", "buttons"];
        self.known_keys(t, &path, &allowed);
        let app_ids = self.app_ids(t, &path, span.clone());
        let title = self.title(t, &path, &app_ids);
        let device = get(t, "device").and_then(|d| {
            let key = join(&path, "device");
            match d.get_ref() {
                DeValue::String(name) if name.is_empty() => {
                    self.error(d.span(), &key, EMPTY_DEVICE_NAME.into());
                    None
                }
                DeValue::String(name) => Some(DeviceMatcher {
                    name: Some(name.as_ref().to_owned()),
                    ..Default::default()
                }),
                DeValue::Table(m) => {
                    self.known_keys(m, &key, &["name", "id", "bus"]);
                    if m.is_empty() {
                        self.error(
                            d.span(),
                            &key,
                            "an empty matcher matches every device: give it name, id or bus, or leave device out".into(),
                        );
                    }
                    Some(self.matcher(m, &key))
                }
                _ => {
                    self.wrong_type(
                        d,
                        &key,
                        "a device name like \"*MX Master*\" or a matcher like { id = \"046d:b034\" }",
                    );
                    None
                }
            }
        });
        let scroll = match self.table(t, &path, "scroll") {
            Some(s) => {
                let scroll_path = join(&path, "scroll");
                if let Some((k, _)) = s.get_key_value("scope") {
                    self.error(
                        k.span(),
                        &join(&scroll_path, "scope"),
                        "scope is global: it decides which devices are transformed, so it belongs in [scroll]; an [[app]] table narrows its devices with device = \"*MX Master*\"".into(),
                    );
                }
                self.misplaced_app_keys(s, &scroll_path, "app.scroll");
                let mut refused = vec!["scope"];
                refused.extend_from_slice(APP_TABLE_KEYS);
                self.known_keys_but(s, &scroll_path, SCROLL_KEYS, &refused);
                self.scroll_keys(s, &scroll_path)
            }
            None => ScrollOverrides::default(),
        };
        let mut gesture = GestureActions::default();
        let mut drags = None;
        if let Some(g) = self.table(t, &path, "gesture") {
            let gpath = join(&path, "gesture");
            self.misplaced_app_keys(g, &gpath, "app.gesture");
            self.known_keys_but(
                g,
                &gpath,
                &["style", "left", "right", "up", "down", "click"],
                APP_TABLE_KEYS,
            );
            let style = self.choice(g, &gpath, "style", &GESTURE_STYLES);
            // A style that is not one is its own error; whether drags fire is then moot.
            if style.is_some() || !g.contains_key("style") {
                let keys: Vec<(&'static str, Span)> = ["left", "right", "up", "down"]
                    .into_iter()
                    .filter_map(|key| g.get_key_value(key).map(|(k, _)| (key, k.span())))
                    .collect();
                if !keys.is_empty() {
                    drags = Some((gpath.clone(), keys));
                }
            }
            gesture = GestureActions {
                style,
                left: self.action_at(g, &gpath, "left").map(|(a, _)| a),
                right: self.action_at(g, &gpath, "right").map(|(a, _)| a),
                up: self.action_at(g, &gpath, "up").map(|(a, _)| a),
                down: self.action_at(g, &gpath, "down").map(|(a, _)| a),
                click: self.action_at(g, &gpath, "click").map(|(a, _)| a),
            };
        }
        let mut buttons = ButtonOverrides::default();
        if let Some(b) = self.table(t, &path, "buttons") {
            self.app_buttons(b, &join(&path, "buttons"), &mut buttons);
        }
        self.config.apps.push(AppRule {
            app_ids,
            title,
            device,
            scroll,
            gesture,
            buttons,
            line: line_col(self.text, span.start).0,
        });
        if let Some((gpath, keys)) = drags {
            self.drag_keys
                .push((self.config.apps.len() - 1, gpath, keys));
        }
    }

    /// Refuses a drag action of an `[[app]]` table that can never fire: for every app the
    /// table names, the style in force wherever the table applies is swipe, where a drag is
    /// a touchpad swipe. The style in force is the last one set by the tables that apply
    /// (in file order), else `[gesture]`'s; a table with a `title` or a `device` may or may
    /// not apply, so any style it sets is possible, while one without either always applies.
    fn check_drag_styles(&mut self) {
        let drag_keys = std::mem::take(&mut self.drag_keys);
        for (rule, gpath, keys) in drag_keys {
            let apps = &self.config.apps;
            let mut swipe_from = None;
            let ids = &apps[rule].app_ids;
            let always_swipe = !ids.is_empty()
                && ids.iter().all(|id| {
                    // The tables naming `id` in file order: (style, always applies).
                    let tables = apps
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.app_ids.iter().any(|a| a == id))
                        .filter_map(|(i, r)| {
                            let always = i == rule || (r.title.is_none() && r.device.is_none());
                            r.gesture.style.map(|s| (s, always, r.line))
                        })
                        .collect::<Vec<_>>();
                    let last_always = tables.iter().rposition(|&(_, always, _)| always);
                    let (base, base_from) = match last_always {
                        Some(k) => (
                            tables[k].0,
                            format!("the [[app]] table at line {}", tables[k].2),
                        ),
                        None => (self.config.gesture.style, "[gesture]".to_owned()),
                    };
                    let later = last_always.map_or(0, |k| k + 1);
                    let swipes = base == GestureStyle::Swipe
                        && tables[later..]
                            .iter()
                            .all(|&(s, _, _)| s == GestureStyle::Swipe);
                    if swipes && swipe_from.is_none() {
                        swipe_from = Some(base_from);
                    }
                    swipes
                });
            if !always_swipe {
                continue;
            }
            let from = swipe_from.unwrap_or_default();
            for (key, span) in keys {
                self.error(
                    span,
                    &join(&gpath, key),
                    format!(
                        "style = \"swipe\" ({from}) makes a drag a touchpad swipe for this app, so a drag never fires an action; add style = \"shortcut\" to this table for its app to fire {key}"
                    ),
                );
            }
        }
    }

    /// Refuses the keys of the `[[app]]` table itself written in its sub-table `[table]`
    /// (at `path`): after `[app.scroll]`, TOML puts `title = …` into `[app.scroll]`.
    fn misplaced_app_keys(&mut self, t: &DeTable<'_>, path: &str, table: &str) {
        for key in APP_TABLE_KEYS {
            let Some((k, _)) = t.get_key_value(*key) else {
                continue;
            };
            let others: Vec<&str> = APP_TABLE_KEYS
                .iter()
                .copied()
                .filter(|o| o != key)
                .collect();
            self.error(
                k.span(),
                &join(path, key),
                format!(
                    "{key} belongs to the [[app]] table itself, as do {}: write it after [[app]], before [{table}]",
                    others.join(" and ")
                ),
            );
        }
    }

    /// `title`: a [`TitlePattern`], at most [`MAX_TITLE_TABLES_PER_APP`] tables with one
    /// per application (counting the tables before this one).
    fn title(&mut self, t: &DeTable<'_>, path: &str, app_ids: &[String]) -> Option<TitlePattern> {
        let (source, span) = self.string(t, path, "title")?;
        let key = join(path, "title");
        let pattern = match TitlePattern::new(source) {
            Ok(p) => p,
            Err(e) => {
                self.error(span, &key, e);
                return None;
            }
        };
        for id in app_ids {
            let before = self
                .config
                .apps
                .iter()
                .filter(|r| r.title.is_some() && r.app_ids.contains(id))
                .count();
            if before >= MAX_TITLE_TABLES_PER_APP {
                self.error(
                    span,
                    &key,
                    format!(
                        "application {} already has {MAX_TITLE_TABLES_PER_APP} [[app]] tables with a title: at most {MAX_TITLE_TABLES_PER_APP}",
                        quoted(id)
                    ),
                );
                return None;
            }
        }
        Some(pattern)
    }

    /// `app_id`: one string or a non-empty array of them, each non-empty, at most
    /// [`MAX_APP_ID_BYTES`], without control characters or surrounding whitespace; at
    /// most [`MAX_APP_IDS`].
    fn app_ids(&mut self, t: &DeTable<'_>, path: &str, span: Span) -> Vec<String> {
        let key = join(path, "app_id");
        let Some(v) = get(t, "app_id") else {
            self.error(
                span,
                path,
                "this [[app]] table names no application: add app_id = \"firefox\" (or a list)"
                    .into(),
            );
            return Vec::new();
        };
        let usage = "an application id like \"firefox\" or a list of them";
        let items: Vec<&Item<'_>> = match v.get_ref() {
            DeValue::String(_) => vec![v],
            DeValue::Array(items) if !items.is_empty() => items.iter().collect(),
            DeValue::Array(_) => {
                self.error(
                    v.span(),
                    &key,
                    "the list is empty: name at least one application, like app_id = [\"firefox\"]"
                        .into(),
                );
                return Vec::new();
            }
            _ => {
                self.wrong_type(v, &key, usage);
                return Vec::new();
            }
        };
        if items.len() > MAX_APP_IDS {
            self.error(
                v.span(),
                &key,
                format!(
                    "{} application ids: at most {MAX_APP_IDS} per table",
                    items.len()
                ),
            );
            return Vec::new();
        }
        let mut ids = Vec::with_capacity(items.len());
        for item in items {
            let Some(id) = item.get_ref().as_str() else {
                self.wrong_type(item, &key, "a string");
                continue;
            };
            let problem = if id.is_empty() {
                Some("is empty".to_owned())
            } else if id.trim().is_empty() {
                Some("is blank: an application id has characters other than spaces".to_owned())
            } else if id.len() > MAX_APP_ID_BYTES {
                Some(format!(
                    "is {} bytes long: at most {MAX_APP_ID_BYTES}",
                    id.len()
                ))
            } else if id.chars().any(char::is_control) {
                Some("contains a control character".to_owned())
            } else if id.trim() != id {
                // Desktops report ids without surrounding spaces: such an id never matches.
                Some(format!(
                    "starts or ends with a space: application ids have none (write {})",
                    quoted(id.trim())
                ))
            } else {
                None
            };
            match problem {
                Some(p) => self.error(
                    item.span(),
                    &key,
                    format!("application id {} {p}", quoted(id)),
                ),
                None if ids.iter().any(|i: &String| i == id) => self.error(
                    item.span(),
                    &key,
                    format!("application id {} is listed twice", quoted(id)),
                ),
                None => ids.push(id.to_owned()),
            }
        }
        ids
    }

    /// `[app.buttons]`: `on_back`, `on_forward` and `[app.buttons.map]`, checked against
    /// the global button numbers like `[buttons]`.
    fn app_buttons(&mut self, b: &DeTable<'_>, path: &str, out: &mut ButtonOverrides) {
        self.misplaced_app_keys(b, path, "app.buttons");
        self.known_keys_but(b, path, &["on_back", "on_forward", "map"], APP_TABLE_KEYS);
        let g = self.config.gesture.button;
        let (back, forward) = (self.config.buttons.back, self.config.buttons.forward);
        for (key, button, slot) in [
            ("on_back", back, &mut out.on_back),
            ("on_forward", forward, &mut out.on_forward),
        ] {
            if let Some((a, span)) = self.action_at(b, path, key) {
                if button == g && a != Action::PassThrough {
                    self.error(
                        span,
                        &join(path, key),
                        format!(
                            "button {} is the gesture button: this action would never fire",
                            g.0
                        ),
                    );
                } else if button == Button::LEFT && a != Action::PassThrough {
                    self.error(
                        span,
                        &join(path, key),
                        "0 is the left button: with this action it could no longer click".into(),
                    );
                }
                *slot = Some(a);
            }
        }
        let Some(map) = self.table(b, path, "map") else {
            return;
        };
        let map_path = join(path, "map");
        // The buttons this table maps, with the span of their keys ("7" and "07" are one).
        let mut mapped: Vec<(Button, Span)> = Vec::new();
        for (k, v) in in_file_order(map) {
            let key = join(&map_path, k.get_ref());
            let Some(n) = self.button_key(k, &key) else {
                continue;
            };
            let Some(a) = self.action(v, &key) else {
                continue;
            };
            if let Some((_, first)) = mapped.iter().find(|(b, _)| *b == n) {
                let first = self.origin(&Some(first.clone()));
                self.error(
                    k.span(),
                    &key,
                    format!("button {} is already mapped ({first})", n.0),
                );
                continue;
            }
            mapped.push((n, k.span()));
            let clash = if n == g {
                Some("it is the gesture button")
            } else if n == back {
                Some("it is buttons.back: set on_back instead")
            } else if n == forward {
                Some("it is buttons.forward: set on_forward instead")
            } else if n == Button::LEFT && a != Action::PassThrough {
                Some("0 is the left button: mapping it would make clicking impossible")
            } else {
                None
            };
            match clash {
                Some(why) => self.error(
                    k.span(),
                    &key,
                    format!("button {} cannot be mapped here: {why}", n.0),
                ),
                None => out.map.push((n, a)),
            }
        }
    }

    /// `dpi`, `smartshift` and `thumb_wheel_invert` of a `[hidpp]` or `[device.hidpp]`
    /// table.
    fn mouse_settings(&mut self, t: &DeTable<'_>, path: &str) -> MouseSettings {
        let dpi = self
            .int(
                t,
                path,
                "dpi",
                (i64::from(MIN_DPI), i64::from(MAX_DPI)),
                "dots per inch",
                " dpi",
            )
            .map(|(n, _)| n as u16);
        MouseSettings {
            dpi,
            smartshift: self.smartshift(t, path),
            thumb_wheel_invert: self.bool(t, path, "thumb_wheel_invert"),
        }
    }

    /// `smartshift`: `"ratchet"`, `"free"` or a threshold 1..=254.
    fn smartshift(&mut self, t: &DeTable<'_>, path: &str) -> Option<SmartShift> {
        const ALLOWED: &str = "\"ratchet\", \"free\" or an integer 1..=254 (the speed above which the wheel spins free)";
        let v = get(t, "smartshift")?;
        let name = join(path, "smartshift");
        match v.get_ref() {
            DeValue::String(s) => match s.as_ref() {
                "ratchet" => Some(SmartShift::Ratchet),
                "free" => Some(SmartShift::Free),
                other => {
                    self.error(
                        v.span(),
                        &name,
                        format!("unknown value {}: allowed {ALLOWED}", quoted(other)),
                    );
                    None
                }
            },
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n @ 1..=254) => Some(SmartShift::Threshold(n as u8)),
                _ => {
                    self.error(
                        v.span(),
                        &name,
                        format!("{} is out of range: allowed {ALLOWED}", integer_shown(i)),
                    );
                    None
                }
            },
            _ => {
                self.wrong_type(v, &name, ALLOWED);
                None
            }
        }
    }

    fn hidpp(&mut self, h: &DeTable<'_>) {
        self.known_keys(h, "hidpp", HIDPP_KEYS);
        self.config.hidpp.settings = self.mouse_settings(h, "hidpp");
        if let Some((b, span)) = self.button(h, "hidpp", "sense_panel") {
            if b == Button::LEFT {
                self.error(
                    span,
                    "hidpp.sense_panel",
                    "0 is the left button: the Sense Panel would click, and every mapping of 0 is refused".into(),
                );
            } else {
                self.config.hidpp.sense_panel = Some(b);
            }
        }
        if let Some(b) = self.bool(h, "hidpp", "haptic_on_gesture") {
            self.config.hidpp.haptic_on_gesture = b;
        }
        let modes = [
            ("auto", KernelMode::Auto, None),
            ("off", KernelMode::Off, None),
        ];
        if let Some(m) = self.choice(h, "hidpp", "kernel_mode", &modes) {
            self.config.hidpp.kernel_mode = m;
        }
        if let Some(b) = self.bool(h, "hidpp", "thumb_wheel") {
            self.config.hidpp.thumb_wheel = b;
        }
        if let Some(b) = self.bool(h, "hidpp", "enabled") {
            self.config.hidpp.enabled = b;
        }
    }

    /// With `[hidpp] enabled = false` no HID++ endpoint is opened: the keys of `t` that only
    /// HID++ applies (the mouse's own settings, the Sense Panel, haptics) are refused.
    fn settings_need_hidpp(&mut self, t: &DeTable<'_>, path: &str) {
        if self.config.hidpp.enabled {
            return;
        }
        for key in [
            "dpi",
            "smartshift",
            "thumb_wheel_invert",
            "sense_panel",
            "haptic_on_gesture",
        ] {
            if let Some((k, _)) = t.get_key_value(key) {
                self.error(
                    k.span(),
                    &join(path, key),
                    format!("{key} would never apply: HID++ is off ([hidpp] enabled = false), and only HID++ sets it; remove it or turn HID++ on"),
                );
            }
        }
    }

    /// The Sense Panel's button must be one no physical button and no other role of the
    /// config uses: buttons 1..=4 are the mouse's right, middle, back and forward buttons,
    /// and the gesture button needs raw XY, which the panel is not diverted with.
    fn check_sense_panel(&mut self, h: &DeTable<'_>) {
        let Some(b) = self.config.hidpp.sense_panel else {
            return;
        };
        let Some(v) = get(h, "sense_panel") else {
            return;
        };
        let buttons = &self.config.buttons;
        let why = if (1..=4).contains(&b.0) {
            Some("it is a button of the mouse itself (1 right, 2 middle, 3 back, 4 forward)")
        } else if b == self.config.gesture.button {
            Some(
                "it is the gesture button, and the Sense Panel cannot draw gestures (pawl diverts it without raw XY); map it in [buttons.map] instead",
            )
        } else if b == buttons.back || b == buttons.forward {
            Some("it is [buttons] back or forward")
        } else {
            None
        };
        if let Some(why) = why {
            self.config.hidpp.sense_panel = None;
            self.error(
                v.span(),
                "hidpp.sense_panel",
                format!("button {} cannot be the Sense Panel: {why}; pick a number no button uses, e.g. 8", b.0),
            );
        }
    }

    fn gesture(&mut self, g: &DeTable<'_>, origins: &mut ButtonOrigins) {
        let path = "gesture";
        self.known_keys(
            g,
            path,
            &[
                "button",
                "style",
                "fingers",
                "swipe_scale",
                "threshold",
                "invert_desktop",
                "repeat",
                "left",
                "right",
                "up",
                "down",
                "click",
            ],
        );
        if let Some((b, span)) = self.button(g, path, "button") {
            self.config.gesture.button = b;
            origins.gesture = Some(span);
        }
        if let Some(s) = self.choice(g, path, "style", &GESTURE_STYLES) {
            self.config.gesture.style = s;
        }
        self.fingers(g, path);
        if let Some(f) = self.float(
            g,
            path,
            "swipe_scale",
            (0.1, 10.0),
            "touchpad units per px",
            "",
        ) {
            self.config.gesture.swipe_scale_milli = (f64::from(f) * 1000.0).round() as u32;
        }
        if let Some((t, _)) = self.int(g, path, "threshold", (1, 10_000), "px", " px") {
            self.config.gesture.threshold = t as u32;
        }
        if let Some(b) = self.bool(g, path, "invert_desktop") {
            self.config.gesture.invert_desktop = b;
        }
        if let Some(b) = self.bool(g, path, "repeat") {
            self.config.gesture.repeat = b;
        }
        for key in ["left", "right", "up", "down", "click"] {
            if let Some((a, _)) = self.action_at(g, path, key) {
                let gc = &mut self.config.gesture;
                *match key {
                    "left" => &mut gc.left,
                    "right" => &mut gc.right,
                    "up" => &mut gc.up,
                    "down" => &mut gc.down,
                    _ => &mut gc.click,
                } = a;
            }
        }
    }

    /// `fingers`: `"auto"` (the desktop's: GNOME 3, KDE 4) or 3..=4.
    fn fingers(&mut self, g: &DeTable<'_>, path: &str) {
        let Some(v) = get(g, "fingers") else {
            return;
        };
        let (lo, hi) = (crate::swipe::MIN_FINGERS, crate::swipe::MAX_FINGERS);
        match v.get_ref() {
            DeValue::String(s) if s.as_ref() == "auto" => self.config.gesture.fingers = None,
            DeValue::Integer(_) => {
                if let Some((n, _)) = self.int(
                    g,
                    path,
                    "fingers",
                    (i64::from(lo), i64::from(hi)),
                    "fingers",
                    " fingers (libinput swipes have 3 or more; a touchpad reports at most 4 with BTN_TOOL_QUADTAP), or \"auto\"",
                ) {
                    self.config.gesture.fingers = Some(n as u8);
                }
            }
            DeValue::String(s) => self.error(
                v.span(),
                "gesture.fingers",
                format!("unknown value {}: allowed \"auto\" or {lo}..={hi}", quoted(s)),
            ),
            _ => self.wrong_type(v, "gesture.fingers", "\"auto\" or an integer (fingers)"),
        }
    }

    fn buttons(&mut self, b: &DeTable<'_>, origins: &mut ButtonOrigins) {
        let path = "buttons";
        self.known_keys(
            b,
            path,
            &["back", "forward", "on_back", "on_forward", "map"],
        );
        if let Some((n, span)) = self.button(b, path, "back") {
            self.config.buttons.back = n;
            origins.back = Some(span);
        }
        if let Some((n, span)) = self.button(b, path, "forward") {
            self.config.buttons.forward = n;
            origins.forward = Some(span);
        }
        if let Some((a, span)) = self.action_at(b, path, "on_back") {
            self.config.buttons.on_back = a;
            origins.on_back = Some(span);
        }
        if let Some((a, span)) = self.action_at(b, path, "on_forward") {
            self.config.buttons.on_forward = a;
            origins.on_forward = Some(span);
        }
        let Some(map) = self.table(b, path, "map") else {
            return;
        };
        for (k, v) in in_file_order(map) {
            let key = format!("buttons.map.{}", k.get_ref());
            let Some(n) = self.button_key(k, &key) else {
                continue;
            };
            if let Some(a) = self.action(v, &key) {
                if let Some(i) = origins.map.iter().position(|(b, _, _)| *b == n) {
                    let first = self.origin(&Some(origins.map[i].1.clone()));
                    self.error(
                        k.span(),
                        &key,
                        format!("button {} is already mapped ({first})", n.0),
                    );
                    continue;
                }
                self.config.buttons.map.push((n, a));
                origins.map.push((n, k.span(), a));
            }
        }
    }

    /// Mappings that are certainly mistakes: a left button that can no longer click or
    /// drag, two roles on one button, a mapping the gesture button makes unreachable.
    fn check_buttons(&mut self, o: &ButtonOrigins) {
        let g = self.config.gesture.button;
        let b = self.config.buttons.clone();
        if g == Button::LEFT {
            let span = o.gesture.clone().unwrap_or_default();
            self.error(
                span,
                "gesture.button",
                "0 is the left button: holding it for gestures would swallow every left drag (selecting text, moving windows); choose an extra button (5 is the MX Master's thumb button)".into(),
            );
        }
        if b.back == b.forward {
            let (span, key, other, other_origin) = match (&o.forward, &o.back) {
                (Some(f), _) => (f.clone(), "buttons.forward", "buttons.back", &o.back),
                (None, Some(bk)) => (bk.clone(), "buttons.back", "buttons.forward", &o.forward),
                (None, None) => (0..0, "buttons.forward", "buttons.back", &o.back),
            };
            let msg = format!(
                "{} is also {other} ({}): back and forward must be different buttons",
                b.back.0,
                self.origin(other_origin)
            );
            self.error(span, key, msg);
        }
        // The gesture button takes its button: a back/forward action written for the same
        // button would never fire. (A default action there is simply replaced.)
        for (button, name, on_key, action, action_origin, button_origin) in [
            (
                b.back,
                "buttons.back",
                "buttons.on_back",
                b.on_back,
                &o.on_back,
                &o.back,
            ),
            (
                b.forward,
                "buttons.forward",
                "buttons.on_forward",
                b.on_forward,
                &o.on_forward,
                &o.forward,
            ),
        ] {
            if button == g && action != Action::PassThrough && action_origin.is_some() {
                let msg = format!(
                    "gesture.button ({}) and {name} ({}) are both button {}: {on_key} = \"{}\" ({}) would never fire, because the gesture button takes the button; set {on_key} = \"pass-through\" or use different buttons",
                    self.origin(&o.gesture),
                    self.origin(button_origin),
                    g.0,
                    action.name().unwrap_or("…"),
                    self.origin(action_origin),
                );
                let (span, key) = match (&o.gesture, button_origin) {
                    (Some(span), _) => (span.clone(), "gesture.button"),
                    (None, Some(span)) => (span.clone(), name),
                    (None, None) => (action_origin.clone().unwrap_or_default(), on_key),
                };
                self.error(span, key, msg);
            }
            if button == Button::LEFT && button != g && action != Action::PassThrough {
                let msg = format!(
                    "0 is the left button: with {on_key} = \"{}\" ({}) it could no longer click; choose another button or set {on_key} = \"pass-through\"",
                    action.name().unwrap_or("key/command"),
                    self.origin(action_origin)
                );
                self.error(button_origin.clone().unwrap_or_default(), name, msg);
            }
        }
        for (n, span, action) in &o.map {
            let key = format!("buttons.map.{}", n.0);
            let clash = if *n == g {
                Some(("gesture.button", &o.gesture, "the gesture takes it"))
            } else if *n == b.back {
                Some(("buttons.back", &o.back, "set buttons.on_back instead"))
            } else if *n == b.forward {
                Some((
                    "buttons.forward",
                    &o.forward,
                    "set buttons.on_forward instead",
                ))
            } else {
                None
            };
            if let Some((other, origin, fix)) = clash {
                let msg = format!(
                    "button {} is {other} ({}): this mapping would never fire; {fix}",
                    n.0,
                    self.origin(origin)
                );
                self.error(span.clone(), &key, msg);
            } else if *n == Button::LEFT && *action != Action::PassThrough {
                self.error(
                    span.clone(),
                    &key,
                    "0 is the left button: mapping it would make clicking impossible".into(),
                );
            }
        }
    }

    fn actions(&mut self, a: &DeTable<'_>) {
        let path = "actions";
        self.known_keys(
            a,
            path,
            &[
                "backend",
                "desktop",
                "allow_root_commands",
                "chords",
                "commands",
            ],
        );
        let (linux, mac) = (Some(Platform::Linux), Some(Platform::MacOs));
        let backends = [
            ("keys", ActionBackend::Keys, linux),
            ("system-events", ActionBackend::SystemEvents, mac),
            ("cg-event", ActionBackend::CgEvent, mac),
            ("command", ActionBackend::Command, None),
        ];
        if let Some(b) = self.choice(a, path, "backend", &backends) {
            self.config.actions.backend = b;
        }
        let desktops = [
            ("auto", None, None),
            ("gnome", Some(Desktop::Gnome), linux),
            ("kde", Some(Desktop::Kde), linux),
            ("macos", Some(Desktop::MacOs), mac),
        ];
        if let Some(d) = self.choice(a, path, "desktop", &desktops) {
            self.config.actions.desktop = d;
        }
        if let Some(b) = self.bool(a, path, "allow_root_commands") {
            self.config.actions.allow_root_commands = b;
        }
        for (section, is_chord) in [("chords", true), ("commands", false)] {
            let Some(table) = self.table(a, path, section) else {
                continue;
            };
            for (k, v) in in_file_order(table) {
                let key = format!("actions.{section}.{}", k.get_ref());
                let action = match Action::from_name(k.get_ref()) {
                    Some(a) if !matches!(a, Action::None | Action::PassThrough) => a,
                    _ => {
                        let names: Vec<String> = BUILTIN_ACTIONS
                            .iter()
                            .filter(|a| !matches!(a, Action::None | Action::PassThrough))
                            .map(|a| a.name().unwrap_or("").to_owned())
                            .collect();
                        self.error(
                            k.span(),
                            &key,
                            format!(
                                "{} is not a built-in action with a shortcut: allowed {}",
                                quoted(k.get_ref()),
                                names.join(", ")
                            ),
                        );
                        continue;
                    }
                };
                if is_chord {
                    let DeValue::String(s) = v.get_ref() else {
                        self.wrong_type(v, &key, "a chord like \"Super+Page_Up\"");
                        continue;
                    };
                    if let Some(i) = self.chord(s, v.span(), &key) {
                        self.config.actions.chords.push((action, i));
                    }
                } else if let Some(i) = self.argv(v, &key) {
                    if self.config.actions.chords.iter().any(|(a, _)| *a == action) {
                        self.error(
                            k.span(),
                            &key,
                            format!(
                                "{} has a chord in [actions.chords] too: an action has one override, a chord or a command (both apply with every backend)",
                                k.get_ref().as_ref()
                            ),
                        );
                        continue;
                    }
                    self.config.actions.commands.push((action, i));
                }
            }
        }
    }

    fn scroll(&mut self, s: &DeTable<'_>) {
        let path = "scroll";
        let mut allowed = vec!["scope"];
        allowed.extend_from_slice(SCROLL_KEYS);
        self.known_keys(s, path, &allowed);
        if let Some(scope) = get(s, "scope") {
            self.scope(scope);
        }
        let keys = self.scroll_keys(s, path);
        self.config.scroll = keys.apply_to(self.config.scroll);
        self.config.scroll_keys = keys;
    }

    fn scope(&mut self, scope: &Item<'_>) {
        let key = "scroll.scope";
        match scope.get_ref() {
            DeValue::String(name) => match name.as_ref() {
                "mx-master-only" => self.config.scope = Scope::MxMasterOnly,
                "all-wheels" => self.config.scope = Scope::AllWheels,
                "none" => self.config.scope = Scope::None,
                other => self.error(
                    scope.span(),
                    key,
                    format!("unknown scope {}: allowed \"mx-master-only\", \"all-wheels\", \"none\" or an array of matchers like [{{ id = \"046d:b034\" }}, {{ name = \"*MX Master*\" }}]", quoted(other)),
                ),
            },
            DeValue::Array(items) => {
                let mut ms = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{key}[{i}]");
                    match item.get_ref() {
                        DeValue::Table(t) => {
                            self.known_keys(t, &path, &["name", "id", "bus"]);
                            let m = self.matcher(t, &path);
                            if t.is_empty() {
                                self.error(
                                    item.span(),
                                    &path,
                                    "an empty matcher matches every device: give it name, id or bus, or write scope = \"all-wheels\"".into(),
                                );
                            }
                            ms.push(m);
                        }
                        _ => self.wrong_type(
                            item,
                            &path,
                            "a matcher like { id = \"046d:b034\" } or { name = \"*MX Master*\" }",
                        ),
                    }
                }
                self.config.scope = Scope::Matchers(ms);
            }
            _ => self.wrong_type(
                scope,
                key,
                "\"mx-master-only\", \"all-wheels\", \"none\" or an array of matchers",
            ),
        }
    }

    fn device(&mut self, d: &DeTable<'_>, i: usize, span: Span) {
        let path = format!("device[{i}]");
        self.known_keys(
            d,
            &path,
            &[
                "name",
                "id",
                "bus",
                "handle",
                "mx_master",
                "transform_scroll",
                "scroll",
                "hidpp",
            ],
        );
        let matcher = self.matcher(d, &path);
        let hidpp_path = format!("{path}.hidpp");
        let hidpp = match self.table(d, &path, "hidpp") {
            Some(h) => {
                for global in [
                    "enabled",
                    "thumb_wheel",
                    "kernel_mode",
                    "sense_panel",
                    "haptic_on_gesture",
                ] {
                    if let Some((k, _)) = h.get_key_value(global) {
                        self.error(
                            k.span(),
                            &join(&hidpp_path, global),
                            format!("{global} is global: it belongs in [hidpp]; [device.hidpp] takes only the mouse's own settings (dpi, smartshift, thumb_wheel_invert)"),
                        );
                    }
                }
                // Every [hidpp] key is known here: the global ones get the error above.
                self.known_keys(h, &hidpp_path, HIDPP_KEYS);
                self.settings_need_hidpp(h, &hidpp_path);
                self.mouse_settings(h, &hidpp_path)
            }
            None => MouseSettings::default(),
        };
        let scroll_path = format!("{path}.scroll");
        let scroll = match self.table(d, &path, "scroll") {
            Some(s) => {
                if let Some((k, _)) = s.get_key_value("scope") {
                    self.error(
                        k.span(),
                        &join(&scroll_path, "scope"),
                        "scope is global: it decides which devices are transformed, so it belongs in [scroll]; a [[device]] rule selects devices itself (transform_scroll = true/false)".into(),
                    );
                }
                self.known_keys_but(s, &scroll_path, SCROLL_KEYS, &["scope"]);
                self.scroll_keys(s, &scroll_path)
            }
            None => ScrollOverrides::default(),
        };
        let rule = DeviceRule {
            matcher,
            handle: self.bool(d, &path, "handle"),
            mx_master: self.bool(d, &path, "mx_master").unwrap_or(false),
            scroll,
            transform_scroll: self.bool(d, &path, "transform_scroll"),
            hidpp,
            line: line_col(self.text, span.start).0,
        };
        if !["name", "id", "bus"].iter().any(|k| d.contains_key(*k)) {
            // A rule without a match key would apply to every device (keyboards aside):
            // `handle = false` alone would switch pawl off, `handle = true` grab every
            // pointer. Almost certainly a forgotten key; `name = "*"` says it on purpose.
            self.error(
                span.clone(),
                &path,
                "this [[device]] rule matches every device: add a match key (name, id or bus; name = \"*\" to mean every device)".into(),
            );
        }
        if rule.handle == Some(false) {
            for (k, what) in [
                ("scroll", "its [device.scroll] settings"),
                ("hidpp", "its [device.hidpp] settings"),
                ("transform_scroll", "transform_scroll = true"),
                ("mx_master", "mx_master = true"),
            ] {
                let set = match get(d, k).map(|v| v.get_ref()) {
                    Some(DeValue::Boolean(b)) => *b,
                    Some(_) => true,
                    None => false,
                };
                if let Some((key, _)) = d.get_key_value(k).filter(|_| set) {
                    let line = get(d, "handle").map_or(String::new(), |h| {
                        format!(" (line {})", line_col(self.text, h.span().start).0)
                    });
                    self.error(
                        key.span(),
                        &join(&path, k),
                        format!("{what} would never apply: handle = false{line} means pawl never touches the device; remove one of them"),
                    );
                }
            }
        }
        self.config.devices.push(rule);
    }
}

/// Where the button settings were written, for the contradiction checks.
#[derive(Default)]
struct ButtonOrigins {
    gesture: Origin,
    back: Origin,
    forward: Origin,
    on_back: Origin,
    on_forward: Origin,
    /// `[buttons.map]` entries: button, span of the key, action.
    map: Vec<(Button, Span, Action)>,
}

/// Parses `"046d:b034"` or `"046d"` (hex).
fn parse_id(s: &str) -> Option<(u16, Option<u16>)> {
    let mut parts = s.split(':');
    let v = u16::from_str_radix(parts.next()?, 16).ok()?;
    let p = match parts.next() {
        Some(p) => Some(u16::from_str_radix(p, 16).ok()?),
        None => None,
    };
    if parts.next().is_some() {
        return None;
    }
    Some((v, p))
}

/// [`Config::app_first_key`] for `config`'s tables and sorted `app_ids`: application `i`
/// gets `2^t` keys, `t` being how many tables with a `title` name it (at most
/// [`MAX_TITLE_TABLES_PER_APP`], so the count fits: 64 × 32 ids × 16 < 2¹⁶).
fn app_first_keys(config: &Config) -> Vec<u16> {
    let mut first = Vec::with_capacity(config.app_ids.len() + 1);
    let mut next = 0u16;
    for id in &config.app_ids {
        first.push(next);
        let titled = config
            .apps
            .iter()
            .filter(|r| r.title.is_some() && r.app_ids.contains(id))
            .count();
        next += 1 << titled.min(MAX_TITLE_TABLES_PER_APP);
    }
    first.push(next);
    first
}
