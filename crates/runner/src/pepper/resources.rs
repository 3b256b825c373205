//! Pepper resources (`PP_Resource`): reference-counted host objects the app names by a
//! nonzero int32. A resource of the wrong kind or an unknown id gets the answer Chrome
//! gives (`PP_ERROR_BADRESOURCE`, `PP_FALSE`, 0), never a host failure.

use std::collections::HashMap;

use super::mem::Callback;

/// A view (`PPB_View`): what `DidChangeView` describes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// x, y, width, height.
    pub rect: [i32; 4],
    pub clip: [i32; 4],
    pub fullscreen: bool,
    pub visible: bool,
    pub page_visible: bool,
    pub device_scale: f32,
    pub css_scale: f32,
}

impl View {
    /// A visible view of `width` x `height` at the origin, wholly unclipped.
    pub fn of_size(width: i32, height: i32) -> View {
        View {
            rect: [0, 0, width, height],
            clip: [0, 0, width, height],
            fullscreen: false,
            visible: true,
            page_visible: true,
            device_scale: 1.0,
            css_scale: 1.0,
        }
    }
}

/// A message loop (`PPB_MessageLoop`).
#[derive(Debug, Default)]
pub struct MessageLoop {
    /// The thread it is attached to (0: the main thread's loop).
    pub tid: Option<i32>,
    /// Work posted before the loop was attached: (callback, delay in ms).
    pub queued: Vec<(Callback, i64)>,
    /// `Run` is active on its thread.
    pub running: bool,
    /// `PostQuit(should_destroy = true)` was called: no more work is accepted.
    pub destroyed: bool,
}

/// An input event (`PPB_InputEvent` and its kinds), replayed from `--events`.
#[derive(Debug, Clone, PartialEq)]
pub struct InputEvent {
    pub kind: i32,
    pub time: f64,
    pub modifiers: u32,
    /// Mouse: button, position (x, y), click count, movement (x, y).
    pub button: i32,
    pub position: (i32, i32),
    pub click_count: i32,
    pub movement: (i32, i32),
    /// Wheel: delta, ticks, scroll by page.
    pub wheel_delta: (f32, f32),
    pub wheel_ticks: (f32, f32),
    pub scroll_by_page: bool,
    /// Keyboard: key code, character text, code. IME: `text` is the composition text.
    pub key_code: u32,
    pub text: String,
    pub code: String,
    /// Touch: the lists touches, changed touches, target touches (`PP_TouchListType`).
    pub touches: [Vec<TouchPoint>; 3],
    /// IME: segment offsets (segment count + 1 of them, or none), target segment, selection.
    pub segment_offsets: Vec<u32>,
    pub target_segment: i32,
    pub selection: (u32, u32),
}

impl InputEvent {
    /// An event of `kind` at `time` with every other field as Chrome's `InputEventData`
    /// starts it (no button, target segment -1, the rest zero or empty).
    pub fn new(kind: i32, time: f64) -> InputEvent {
        InputEvent {
            kind,
            time,
            modifiers: 0,
            button: -1,
            position: (0, 0),
            click_count: 0,
            movement: (0, 0),
            wheel_delta: (0.0, 0.0),
            wheel_ticks: (0.0, 0.0),
            scroll_by_page: false,
            key_code: 0,
            text: String::new(),
            code: String::new(),
            touches: Default::default(),
            segment_offsets: Vec::new(),
            target_segment: -1,
            selection: (0, 0),
        }
    }
}

/// A `PP_TouchPoint` with its tilt (`PPB_TouchInputEvent;1.4`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TouchPoint {
    pub id: u32,
    pub position: (f32, f32),
    pub radius: (f32, f32),
    pub rotation_angle: f32,
    pub pressure: f32,
    pub tilt: (f32, f32),
}

/// What a resource is.
#[derive(Debug)]
pub enum Resource {
    View(View),
    MessageLoop(MessageLoop),
    InputEvent(Box<InputEvent>),
    /// `PPB_URLRequestInfo`, `PPB_URLLoader`, `PPB_URLResponseInfo` (`ppb/url.rs`).
    UrlRequestInfo(Box<super::loader::RequestInfo>),
    UrlLoader(super::loader::LoaderHandle),
    UrlResponseInfo(std::sync::Arc<super::fetch::Head>),
    /// `PPB_FileSystem`, `PPB_FileRef`, `PPB_FileIO` (`ppb/files.rs`).
    FileSystem(std::sync::Arc<super::storage::FileSystem>),
    FileRef(super::storage::FileRef),
    FileIo(std::sync::Arc<super::storage::FileIo>),
    ImageData(super::gfx::ImageData),
    Graphics2D(Box<super::gfx::Graphics2D>),
    NetAddress(std::net::SocketAddr),
    HostResolver(super::net::HostResolver),
    TcpSocket(super::net::TcpSocket),
    UdpSocket(super::net::UdpSocket),
    WebSocket(super::net::WebSocket),
}

/// The resources of one run.
#[derive(Debug)]
pub struct Resources {
    next: i32,
    map: HashMap<i32, (u32, Resource)>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            // Small ids are left to instances and modules, so that mixing them up fails.
            next: 0x100,
            map: HashMap::new(),
        }
    }
}

impl Resources {
    /// Adds `r` with one reference (the caller's); its id.
    pub fn add(&mut self, r: Resource) -> i32 {
        let id = self.next;
        // Ids are not reused; a run that makes 2^31 resources gets 0 (no resource).
        self.next = self.next.checked_add(1).unwrap_or(0);
        if id == 0 {
            return 0;
        }
        self.map.insert(id, (1, r));
        id
    }

    pub fn add_ref(&mut self, id: i32) -> bool {
        match self.map.get_mut(&id) {
            Some((n, _)) => {
                *n = n.saturating_add(1);
                true
            }
            None => false,
        }
    }

    /// Drops a reference; the resource when that was the last one.
    pub fn release(&mut self, id: i32) -> Option<Resource> {
        let (n, _) = self.map.get_mut(&id)?;
        *n -= 1;
        if *n == 0 {
            self.map.remove(&id).map(|(_, r)| r)
        } else {
            None
        }
    }

    pub fn get(&self, id: i32) -> Option<&Resource> {
        self.map.get(&id).map(|(_, r)| r)
    }

    /// Every live resource with its id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &Resource)> {
        self.map.iter().map(|(id, (_, r))| (*id, r))
    }

    pub fn get_mut(&mut self, id: i32) -> Option<&mut Resource> {
        self.map.get_mut(&id).map(|(_, r)| r)
    }

    /// The reference count of `id` (tests).
    pub fn ref_count(&self, id: i32) -> Option<u32> {
        self.map.get(&id).map(|(n, _)| *n)
    }

    /// Every live resource id, with its kind (for leak reports and tests).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn message_loop(&mut self, id: i32) -> Option<&mut MessageLoop> {
        match self.get_mut(id) {
            Some(Resource::MessageLoop(l)) => Some(l),
            _ => None,
        }
    }
}

/// Typed access to the resources of one kind: `name(id)` (and `name_mut`) is resource
/// `id` when it is a `Resource::Kind`, else `None`.
macro_rules! kinds {
    ($($name:ident $(/ $name_mut:ident)?: $kind:ident => $ty:ty;)*) => {
        impl Resources {
            $(
                pub fn $name(&self, id: i32) -> Option<&$ty> {
                    match self.get(id) {
                        Some(Resource::$kind(x)) => Some(x),
                        _ => None,
                    }
                }
                $(
                    pub fn $name_mut(&mut self, id: i32) -> Option<&mut $ty> {
                        match self.get_mut(id) {
                            Some(Resource::$kind(x)) => Some(x),
                            _ => None,
                        }
                    }
                )?
            )*
        }
    };
}

kinds! {
    view: View => View;
    input_event: InputEvent => InputEvent;
    image_data: ImageData => super::gfx::ImageData;
    graphics_2d / graphics_2d_mut: Graphics2D => super::gfx::Graphics2D;
}
