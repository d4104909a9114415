// pawl's KWin script: tells pawl which application is focused, over the session bus.
// pawl loads it into KWin itself (org.kde.kwin.Scripting loadScript, then start) when it
// connects on KDE Plasma; it runs inside KWin 5.27 and KWin 6.
//
// On load it pushes the active window once, then once per activation and per caption
// change of the active window: io.github.pawl.Focus1 Activated(app_id, caption) on
// /io/github/pawl/Focus1.
// The app id is the window's desktopFileName when it has one (the .desktop file's name,
// what Wayland clients set as their app_id, "org.kde.dolphin"), else its resourceClass
// (the X11 WM_CLASS class, "firefox"); "" when there is no active window.

// KWin 5 gives resourceClass and desktopFileName as byte arrays (ArrayBuffer), KWin 6 as
// strings; both become a string here.
function text(v) {
    if (v === undefined || v === null) {
        return "";
    }
    if (typeof v === "string") {
        return v;
    }
    if (typeof ArrayBuffer !== "undefined" && v instanceof ArrayBuffer) {
        var bytes = new Uint8Array(v);
        var s = "";
        for (var i = 0; i < bytes.length; i++) {
            s += String.fromCharCode(bytes[i]);
        }
        return s;
    }
    return String(v);
}

function appId(window) {
    if (!window) {
        return "";
    }
    var desktop = text(window.desktopFileName);
    return desktop !== "" ? desktop : text(window.resourceClass);
}

function push(window) {
    callDBus(
        "io.github.pawl.Focus1",
        "/io/github/pawl/Focus1",
        "io.github.pawl.Focus1",
        "Activated",
        appId(window),
        window ? text(window.caption) : ""
    );
}

// The active window, whose captionChanged is connected to pushCaption.
var titled = null;

function pushCaption() {
    push(titled);
}

function activated(window) {
    if (titled) {
        try {
            titled.captionChanged.disconnect(pushCaption);
        } catch (e) {
            // The window is gone, and its signal with it.
        }
    }
    titled = window || null;
    if (titled && titled.captionChanged) {
        titled.captionChanged.connect(pushCaption);
    }
    push(titled);
}

if (workspace.windowActivated !== undefined) {
    // KWin 6.
    workspace.windowActivated.connect(activated);
    activated(workspace.activeWindow);
} else {
    // KWin 5.
    workspace.clientActivated.connect(activated);
    activated(workspace.activeClient);
}
