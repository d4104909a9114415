//! `pawl-vm-driver --wayland-window APP_ID`: one xdg-shell toplevel with the given
//! `app_id`, mapped on the compositor of `$WAYLAND_DISPLAY` and kept until the compositor
//! closes it or goes away. It is the application the per-application scenarios focus on
//! sway: a real Wayland client, so the `app_id` pawl sees comes from sway's own window
//! tree, not from the test.
//!
//! Each line read on stdin becomes the window's title (`xdg_toplevel.set_title`), so a
//! scenario can change the title of a focused window as a browser does when its tab
//! changes; with stdin at its end the title stays "pawl test window APP_ID".
//!
//! The window is a 64×64 px buffer of one grey in `wl_shm` ARGB8888 (a format every
//! compositor supports, wayland.xml), attached after the first `xdg_surface.configure` as
//! xdg-shell requires. Through `wayland-client`'s pure-Rust backend: no libwayland needed in
//! the VM.

use std::os::fd::AsFd;

use anyhow::{Context, bail};
use wayland_client::protocol::{
    wl_buffer, wl_compositor, wl_registry, wl_shm, wl_shm_pool, wl_surface,
};
use wayland_client::{Connection, Dispatch, QueueHandle, delegate_noop};
use wayland_protocols::xdg::shell::client::{xdg_surface, xdg_toplevel, xdg_wm_base};

/// The buffer's side, px.
const SIDE: i32 = 64;

#[derive(Default)]
struct Window {
    compositor: Option<wl_compositor::WlCompositor>,
    shm: Option<wl_shm::WlShm>,
    wm_base: Option<xdg_wm_base::XdgWmBase>,
    /// The serial of the latest configure not yet acked.
    configure: Option<u32>,
    closed: bool,
}

impl Dispatch<wl_registry::WlRegistry, ()> for Window {
    fn event(
        state: &mut Self,
        registry: &wl_registry::WlRegistry,
        event: wl_registry::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        if let wl_registry::Event::Global {
            name,
            interface,
            version,
        } = event
        {
            match interface.as_str() {
                "wl_compositor" => {
                    state.compositor = Some(registry.bind(name, version.min(4), qh, ()))
                }
                "wl_shm" => state.shm = Some(registry.bind(name, 1, qh, ())),
                "xdg_wm_base" => state.wm_base = Some(registry.bind(name, 1, qh, ())),
                _ => {}
            }
        }
    }
}

impl Dispatch<xdg_wm_base::XdgWmBase, ()> for Window {
    fn event(
        _: &mut Self,
        wm_base: &xdg_wm_base::XdgWmBase,
        event: xdg_wm_base::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // An unanswered ping makes the compositor call the client unresponsive.
        if let xdg_wm_base::Event::Ping { serial } = event {
            wm_base.pong(serial);
        }
    }
}

impl Dispatch<xdg_surface::XdgSurface, ()> for Window {
    fn event(
        state: &mut Self,
        _: &xdg_surface::XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            state.configure = Some(serial);
        }
    }
}

impl Dispatch<xdg_toplevel::XdgToplevel, ()> for Window {
    fn event(
        state: &mut Self,
        _: &xdg_toplevel::XdgToplevel,
        event: xdg_toplevel::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let xdg_toplevel::Event::Close = event {
            state.closed = true;
        }
    }
}

delegate_noop!(Window: ignore wl_compositor::WlCompositor);
delegate_noop!(Window: ignore wl_shm::WlShm);
delegate_noop!(Window: ignore wl_shm_pool::WlShmPool);
delegate_noop!(Window: ignore wl_buffer::WlBuffer);
delegate_noop!(Window: ignore wl_surface::WlSurface);

/// Maps the window and serves it until it is closed (`Ok`) or the connection ends (the
/// error). Errors: no `$WAYLAND_DISPLAY` compositor, a missing global, the shm buffer.
pub fn run(app_id: &str) -> anyhow::Result<()> {
    let conn = Connection::connect_to_env().context("connect to $WAYLAND_DISPLAY")?;
    let mut queue = conn.new_event_queue();
    let qh = queue.handle();
    conn.display().get_registry(&qh, ());
    let mut w = Window::default();
    queue.roundtrip(&mut w).context("registry roundtrip")?;
    let (Some(compositor), Some(shm), Some(wm_base)) =
        (w.compositor.clone(), w.shm.clone(), w.wm_base.clone())
    else {
        bail!("the compositor lacks wl_compositor, wl_shm or xdg_wm_base");
    };
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm_base.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg.get_toplevel(&qh, ());
    toplevel.set_app_id(app_id.to_owned());
    toplevel.set_title(format!("pawl test window {app_id}"));
    surface.commit();
    // Proxies may send requests from any thread (wayland-client); the title needs no
    // commit (xdg-shell: it is not double-buffered state).
    let titler = (toplevel.clone(), conn.clone());
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let Ok(title) = line else { break };
            titler.0.set_title(title);
            if titler.1.flush().is_err() {
                break;
            }
        }
    });

    let size = SIDE * SIDE * 4;
    let memfd = rustix::fs::memfd_create("pawl-window", rustix::fs::MemfdFlags::CLOEXEC)
        .context("memfd_create")?;
    rustix::fs::ftruncate(&memfd, size as u64).context("ftruncate")?;
    let grey = [0x80u8, 0x80, 0x80, 0xff].repeat((SIDE * SIDE) as usize);
    rustix::io::write(&memfd, &grey).context("fill the buffer")?;
    let pool = shm.create_pool(memfd.as_fd(), size, &qh, ());
    let buffer = pool.create_buffer(0, SIDE, SIDE, SIDE * 4, wl_shm::Format::Argb8888, &qh, ());

    let mut mapped = false;
    while !w.closed {
        queue.blocking_dispatch(&mut w).context("dispatch")?;
        if let Some(serial) = w.configure.take() {
            xdg.ack_configure(serial);
            if !mapped {
                surface.attach(Some(&buffer), 0, 0);
                surface.damage(0, 0, SIDE, SIDE);
                mapped = true;
            }
            surface.commit();
        }
    }
    Ok(())
}
