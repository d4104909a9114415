// pawl focus, for GNOME Shell 45 and later: tells pawl which application is focused.
// On every focus change, every title change of the focused window, and once when pawl's
// bus name appears, it calls io.github.pawl.Focus1 Activated(app_id, title) on the session
// bus; nothing polls.

import Gio from "gi://Gio";
import GLib from "gi://GLib";
import Shell from "gi://Shell";
import {Extension} from "resource:///org/gnome/shell/extensions/extension.js";

// pawl's session-bus service (crates/pawl-linux/src/focus/shell.rs).
const BUS_NAME = "io.github.pawl.Focus1";
const OBJECT_PATH = "/io/github/pawl/Focus1";
const INTERFACE = "io.github.pawl.Focus1";

export default class PawlFocusExtension extends Extension {
    enable() {
        this._enable();
    }

    disable() {
        this._disable();
    }

    // pawl-focus: shared logic (identical in legacy/ and esm/).
    _enable() {
        this._tracker = Shell.WindowTracker.get_default();
        this._pawl = null;
        this._titled = null;
        this._titleId = 0;
        this._focusId = global.display.connect("notify::focus-window", () => this._focused());
        // A pawl started after the shell gets the current app when its name appears.
        this._watchId = Gio.bus_watch_name(
            Gio.BusType.SESSION,
            BUS_NAME,
            Gio.BusNameWatcherFlags.NONE,
            (_conn, _name, owner) => {
                this._pawl = owner;
                this._focused();
            },
            () => {
                this._pawl = null;
            }
        );
    }

    // Follows the focused window's title too: a browser's tab changes it.
    _focused() {
        this._untrack();
        const window = global.display.focus_window;
        if (window) {
            this._titled = window;
            this._titleId = window.connect("notify::title", () => this._push());
        }
        this._push();
    }

    _untrack() {
        if (this._titled) {
            try {
                this._titled.disconnect(this._titleId);
            } catch (e) {
                // The window is gone, and its handler with it.
            }
        }
        this._titled = null;
        this._titleId = 0;
    }

    _disable() {
        this._untrack();
        global.display.disconnect(this._focusId);
        Gio.bus_unwatch_name(this._watchId);
        this._focusId = 0;
        this._watchId = 0;
        this._tracker = null;
        this._pawl = null;
    }

    // The focused window's app id: its .desktop file's id without ".desktop", else
    // (a window GNOME matched to no .desktop file, "window:N") its WM_CLASS; "" for none.
    _appId(window) {
        if (!window) {
            return "";
        }
        const app = this._tracker.get_window_app(window);
        const id = app ? app.get_id() : null;
        if (id && !id.startsWith("window:")) {
            return id.endsWith(".desktop") ? id.slice(0, -".desktop".length) : id;
        }
        return window.get_wm_class() || "";
    }

    _push() {
        if (!this._pawl) {
            return;
        }
        const window = global.display.focus_window;
        Gio.DBus.session.call(
            BUS_NAME,
            OBJECT_PATH,
            INTERFACE,
            "Activated",
            new GLib.Variant("(ss)", [this._appId(window), window ? window.get_title() || "" : ""]),
            null,
            Gio.DBusCallFlags.NO_AUTO_START,
            -1,
            null,
            null
        );
    }
    // pawl-focus: end of shared logic.
}
