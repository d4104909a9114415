//! The frontmost application from NSWorkspace, for `[[app]]` profiles ([`crate::focus`]):
//! its bundle identifier once at start ([`frontmost`]), then each
//! `NSWorkspaceDidActivateApplicationNotification` ([`Observer`]).
//!
//! The observer is a block on `NSWorkspace.sharedWorkspace.notificationCenter` with no
//! operation queue, so it runs synchronously on the thread that posts the notification.
//! NSWorkspace posts on the main thread, and the worker's run loop is the main thread's
//! (in `pawl run`): the block runs there, between tap callbacks, never beside one.
//! [`Observer::install`] refuses any other thread. Nothing polls and no timer is armed.

use std::ptr::NonNull;

use block2::RcBlock;
use objc2::MainThreadMarker;
use objc2::rc::{Retained, autoreleasepool};
use objc2::runtime::{AnyObject, NSObjectProtocol, ProtocolObject};
use objc2_app_kit::{
    NSRunningApplication, NSWorkspace, NSWorkspaceApplicationKey,
    NSWorkspaceDidActivateApplicationNotification,
};
use objc2_foundation::{NSNotification, NSNotificationCenter};

/// The bundle identifier of the frontmost application now (`None`: there is none, or it
/// has no bundle identifier).
pub(super) fn frontmost() -> Option<String> {
    autoreleasepool(|_| {
        let app = NSWorkspace::sharedWorkspace().frontmostApplication()?;
        bundle_id(&app)
    })
}

fn bundle_id(app: &NSRunningApplication) -> Option<String> {
    app.bundleIdentifier().map(|id| id.to_string())
}

/// The bundle identifier of the application a `NSWorkspaceDidActivateApplicationNotification`
/// names (`userInfo[NSWorkspaceApplicationKey]`, an `NSRunningApplication`).
fn activated(note: &NSNotification) -> Option<String> {
    let info = note.userInfo()?;
    // SAFETY: an immutable NSString constant of AppKit.
    let key = unsafe { NSWorkspaceApplicationKey };
    let app = info.objectForKey(key)?;
    let app = app.downcast::<NSRunningApplication>().ok()?;
    bundle_id(&app)
}

/// The `NSWorkspaceDidActivateApplicationNotification` observer; removed on drop.
#[derive(Debug)]
pub(super) struct Observer {
    center: Retained<NSNotificationCenter>,
    token: Retained<ProtocolObject<dyn NSObjectProtocol>>,
}

impl Observer {
    /// Calls `on_activate` with the bundle identifier of each application that becomes
    /// frontmost (`None`: it has none), on the main thread. Errors: the calling thread is
    /// not the main thread (the block would run on another thread than the worker).
    pub(super) fn install(
        on_activate: impl Fn(Option<&str>) + 'static,
    ) -> Result<Observer, &'static str> {
        MainThreadMarker::new().ok_or(
            "the worker is not on the main thread, where NSWorkspace posts its notifications",
        )?;
        let center = NSWorkspace::sharedWorkspace().notificationCenter();
        let block = RcBlock::new(move |note: NonNull<NSNotification>| {
            autoreleasepool(|_| {
                // SAFETY: the center passes a valid notification for the call.
                let bundle = activated(unsafe { note.as_ref() });
                on_activate(bundle.as_deref());
            });
        });
        // SAFETY: a valid notification name; no object filter; no queue: the block runs on
        // the posting thread, the main thread, which is the worker's (checked above).
        let token = unsafe {
            center.addObserverForName_object_queue_usingBlock(
                Some(NSWorkspaceDidActivateApplicationNotification),
                None,
                None,
                &block,
            )
        };
        Ok(Observer { center, token })
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        let token: &AnyObject = (*self.token).as_ref();
        // SAFETY: the token addObserverForName returned; the center releases the block.
        unsafe { self.center.removeObserver(token) };
    }
}
