//! 2D graphics of the command-line host (`PPB_ImageData`, `PPB_Graphics2D`): what the
//! resources hold and what a Flush does to them, apart from the PPB calls (`ppb/image_data.rs`,
//! `ppb/graphics_2d.rs`).
//!
//! * An image's pixels live in module memory (Map hands the app a pointer into them), in
//!   blocks from the runtime's page allocator (`__ppapi_alloc`). A block is shared by the
//!   resource and the operations queued with it, and given back (`__ppapi_free`) once the
//!   last of them is gone: the drop queues it on [`GfxState`]'s free list, which the next
//!   call that has the module at hand (ImageData.Create, Graphics2D.Flush) empties.
//! * A Graphics2D context's backing store is host memory in the native format
//!   (BGRA, premultiplied), as Chrome's was. PaintImageData, Scroll and ReplaceContents are
//!   checked when called and queued; Flush applies them in order, reading the images' pixels
//!   as they are then (so what the app wrote before the Flush is what shows, as in Chrome).
//! * With `--frames DIR`, each Flush of the context bound to the instance that applied at
//!   least one operation writes the backing store as `DIR/frame-NNNNN.png`: 8-bit RGBA with
//!   straight (not premultiplied) alpha; an always-opaque context's frames have alpha 255.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::lock;

/// `PP_IMAGEDATAFORMAT_BGRA_PREMUL`, the native format (Chrome's on little-endian hosts).
pub const BGRA_PREMUL: i32 = 0;
/// `PP_IMAGEDATAFORMAT_RGBA_PREMUL`.
pub const RGBA_PREMUL: i32 = 1;
/// Largest width or height of an image or a context.
pub const MAX_SIDE: i32 = 16384;
/// Largest image or backing store, in bytes.
pub const MAX_BYTES: u64 = 256 << 20;

/// The byte size of a `width` x `height` image (4 bytes a pixel, no padding), or `None`
/// when the size is not allowed: not positive, a side over [`MAX_SIDE`] or more than
/// [`MAX_BYTES`] in all.
pub fn image_bytes(width: i32, height: i32) -> Option<u32> {
    if width <= 0 || height <= 0 || width > MAX_SIDE || height > MAX_SIDE {
        return None;
    }
    let n = width as u64 * height as u64 * 4;
    (n <= MAX_BYTES).then_some(n as u32)
}

/// Blocks of module memory waiting to be given back: (address, length).
pub type FreeList = Arc<Mutex<Vec<(u32, u32)>>>;

/// An image's pixels in module memory; queued for freeing when dropped.
#[derive(Debug)]
pub struct ModuleBlock {
    pub addr: u32,
    pub len: u32,
    frees: FreeList,
}

impl ModuleBlock {
    pub(crate) fn new(addr: u32, len: u32, frees: FreeList) -> ModuleBlock {
        ModuleBlock { addr, len, frees }
    }
}

impl Drop for ModuleBlock {
    fn drop(&mut self) {
        lock(&self.frees).push((self.addr, self.len));
    }
}

/// A `PPB_ImageData` resource.
#[derive(Debug, Clone)]
pub struct ImageData {
    pub format: i32,
    pub width: i32,
    pub height: i32,
    pub pixels: Arc<ModuleBlock>,
}

impl ImageData {
    /// Bytes from one row to the next.
    pub fn stride(&self) -> i32 {
        self.width * 4
    }
}

/// `SetLayerTransform`'s arguments, kept (nothing is composited here).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerTransform {
    pub scale: f32,
    pub origin: (i32, i32),
    pub translate: (i32, i32),
}

/// An operation queued until the next Flush.
#[derive(Debug)]
pub(crate) enum Op {
    /// The image's `src` rect (x, y, w, h) drawn with the image's origin at `at`.
    Paint {
        image: ImageData,
        at: (i32, i32),
        src: [i32; 4],
    },
    /// The `clip` rect's pixels moved by `by`.
    Scroll { clip: [i32; 4], by: (i32, i32) },
    /// The whole backing store replaced by the image.
    Replace { image: ImageData },
}

impl Op {
    /// The image whose pixels the operation reads.
    pub(crate) fn image(&self) -> Option<&ImageData> {
        match self {
            Op::Paint { image, .. } | Op::Replace { image } => Some(image),
            Op::Scroll { .. } => None,
        }
    }
}

/// A `PPB_Graphics2D` resource.
#[derive(Debug)]
pub struct Graphics2D {
    pub width: i32,
    pub height: i32,
    pub is_always_opaque: bool,
    /// `SetScale` (1.1); 1.0 until set.
    pub scale: f32,
    /// `SetLayerTransform` (1.2), the last one accepted.
    pub layer_transform: Option<LayerTransform>,
    /// BGRA premultiplied, `width * 4` bytes a row.
    backing: Vec<u8>,
    queued: Vec<Op>,
    /// A Flush whose callback has not run yet.
    pub(crate) flush_pending: bool,
}

/// Whether `r` (x, y, w, h; `None`: the whole area) lies in a `width` x `height` area, the
/// rect it stands for if so (Chrome's `ValidateAndConvertRect`).
fn rect_within(r: Option<[i32; 4]>, width: i32, height: i32) -> Option<[i32; 4]> {
    let Some([x, y, w, h]) = r else {
        return Some([0, 0, width, height]);
    };
    if x < 0 || y < 0 || w <= 0 || h <= 0 {
        return None;
    }
    if x as i64 + w as i64 > width as i64 || y as i64 + h as i64 > height as i64 {
        return None;
    }
    Some([x, y, w, h])
}

impl Graphics2D {
    /// A context of `width` x `height`, transparent black, or `None` for a size
    /// [`image_bytes`] refuses.
    pub fn new(width: i32, height: i32, is_always_opaque: bool) -> Option<Graphics2D> {
        let n = image_bytes(width, height)?;
        Some(Graphics2D {
            width,
            height,
            is_always_opaque,
            scale: 1.0,
            layer_transform: None,
            backing: vec![0; n as usize],
            queued: Vec::new(),
            flush_pending: false,
        })
    }

    /// The backing store: BGRA, premultiplied, `width * 4` bytes a row (what the last
    /// Flush left; queued operations are not in it).
    pub fn backing(&self) -> &[u8] {
        &self.backing
    }

    /// The pixel at (x, y) of the backing store as (b, g, r, a).
    pub fn pixel(&self, x: i32, y: i32) -> Option<[u8; 4]> {
        if x < 0 || y < 0 || x >= self.width || y >= self.height {
            return None;
        }
        let i = ((y * self.width + x) * 4) as usize;
        self.backing[i..i + 4].try_into().ok()
    }

    /// How many operations wait for the next Flush.
    pub fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Queues `PaintImageData`; false (nothing queued) when a rect is outside the image
    /// or the backing store, as Chrome refused it.
    pub(crate) fn paint(
        &mut self,
        image: &ImageData,
        at: (i32, i32),
        src: Option<[i32; 4]>,
    ) -> bool {
        let Some(src) = rect_within(src, image.width, image.height) else {
            return false;
        };
        let (x, y) = (at.0 as i64, at.1 as i64);
        if x + (src[0] as i64) < 0
            || x + (src[0] + src[2]) as i64 > self.width as i64
            || y + (src[1] as i64) < 0
            || y + (src[1] + src[3]) as i64 > self.height as i64
        {
            return false;
        }
        self.queued.push(Op::Paint {
            image: image.clone(),
            at,
            src,
        });
        true
    }

    /// Queues `Scroll`; false when the clip is outside the backing store or the amount
    /// is a whole width or height or more.
    pub(crate) fn scroll(&mut self, clip: Option<[i32; 4]>, by: (i32, i32)) -> bool {
        let Some(clip) = rect_within(clip, self.width, self.height) else {
            return false;
        };
        let (dx, dy) = by;
        if dx <= -self.width || dx >= self.width || dy <= -self.height || dy >= self.height {
            return false;
        }
        self.queued.push(Op::Scroll { clip, by });
        true
    }

    /// Queues `ReplaceContents`; false when the image's size is not the context's.
    pub(crate) fn replace(&mut self, image: &ImageData) -> bool {
        if image.width != self.width || image.height != self.height {
            return false;
        }
        self.queued.push(Op::Replace {
            image: image.clone(),
        });
        true
    }

    /// The queued operations, in order, leaving none.
    pub(crate) fn take_queued(&mut self) -> Vec<Op> {
        std::mem::take(&mut self.queued)
    }

    /// Applies `op` to the backing store; `pixels` are its image's bytes (`width * 4` a
    /// row) when it has one.
    pub(crate) fn apply(&mut self, op: &Op, pixels: Option<&[u8]>) {
        match (op, pixels) {
            (Op::Paint { image, at, src }, Some(px)) => {
                let [sx, sy, w, h] = *src;
                self.blit(image, px, (sx, sy), (at.0 + sx, at.1 + sy), (w, h));
            }
            (Op::Replace { image }, Some(px)) => {
                self.blit(image, px, (0, 0), (0, 0), (image.width, image.height));
            }
            (Op::Scroll { clip, by }, _) => self.apply_scroll(*clip, *by),
            _ => {}
        }
    }

    /// Copies a `size` rect of the image at `from` to the backing store at `to`, converting
    /// RGBA to BGRA. The rects were checked when queued.
    fn blit(
        &mut self,
        image: &ImageData,
        px: &[u8],
        from: (i32, i32),
        to: (i32, i32),
        size: (i32, i32),
    ) {
        let swap = image.format != BGRA_PREMUL;
        let n = size.0 as usize * 4;
        for row in 0..size.1 {
            let s = ((from.1 + row) as usize * image.width as usize + from.0 as usize) * 4;
            let d = ((to.1 + row) as usize * self.width as usize + to.0 as usize) * 4;
            let (Some(src), Some(dst)) = (px.get(s..s + n), self.backing.get_mut(d..d + n)) else {
                return;
            };
            dst.copy_from_slice(src);
            if swap {
                for p in dst.chunks_exact_mut(4) {
                    p.swap(0, 2);
                }
            }
        }
    }

    /// Moves the pixels of `clip` by `by` (those that stay inside it); the rest of the clip
    /// keeps what it had, as `gfx::ScrollCanvas` did.
    fn apply_scroll(&mut self, clip: [i32; 4], by: (i32, i32)) {
        let [cx, cy, cw, ch] = clip;
        let stride = self.width as usize * 4;
        let mut copy = Vec::with_capacity(cw as usize * ch as usize * 4);
        for y in cy..cy + ch {
            let s = y as usize * stride + cx as usize * 4;
            copy.extend_from_slice(&self.backing[s..s + cw as usize * 4]);
        }
        for y in 0..ch {
            let sy = y - by.1;
            if sy < 0 || sy >= ch {
                continue;
            }
            for x in 0..cw {
                let sx = x - by.0;
                if sx < 0 || sx >= cw {
                    continue;
                }
                let s = (sy as usize * cw as usize + sx as usize) * 4;
                let d = (cy + y) as usize * stride + (cx + x) as usize * 4;
                self.backing[d..d + 4].copy_from_slice(&copy[s..s + 4]);
            }
        }
    }

    /// The backing store as 8-bit RGBA with straight alpha (a frame's pixels).
    pub fn to_rgba(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.backing.len());
        for p in self.backing.chunks_exact(4) {
            let (b, g, r, a) = (p[0], p[1], p[2], p[3]);
            if self.is_always_opaque {
                out.extend_from_slice(&[r, g, b, 255]);
            } else if a == 0 {
                out.extend_from_slice(&[0, 0, 0, 0]);
            } else {
                let un = |c: u8| ((c as u32 * 255 + a as u32 / 2) / a as u32).min(255) as u8;
                out.extend_from_slice(&[un(r), un(g), un(b), a]);
            }
        }
        out
    }
}

/// Why a frame could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Png {
        path: PathBuf,
        source: png::EncodingError,
    },
}

/// Writes `rgba` (`width` x `height`, 8-bit RGBA) as a PNG at `path`.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), FrameError> {
    let io = |source| FrameError::Io {
        path: path.to_path_buf(),
        source,
    };
    let enc = |source| FrameError::Png {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut e = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    e.set_color(png::ColorType::Rgba);
    e.set_depth(png::BitDepth::Eight);
    e.set_compression(png::Compression::Fast);
    let mut w = e.write_header().map_err(enc)?;
    w.write_image_data(rgba).map_err(enc)?;
    w.finish().map_err(enc)
}

/// The 2D graphics state of a run.
#[derive(Debug, Default)]
pub struct GfxState {
    /// Image blocks to give back to the module's allocator.
    pub(crate) frees: FreeList,
    /// The Graphics2D context bound to the instance (0: none).
    pub(crate) bound: Mutex<i32>,
    /// The number of the next frame file.
    next_frame: Mutex<u64>,
    /// A frame failed to write (noted once; later ones are still tried).
    frame_failed: AtomicBool,
}

impl GfxState {
    /// Writes the next frame into `dir`; the error is noted the first time.
    pub(crate) fn write_frame(
        &self,
        dir: &Path,
        width: i32,
        height: i32,
        rgba: &[u8],
        note: impl Fn(&str),
    ) {
        let n = {
            let mut next = lock(&self.next_frame);
            *next += 1;
            *next - 1
        };
        let path = dir.join(format!("frame-{n:05}.png"));
        let r = std::fs::create_dir_all(dir)
            .map_err(|source| FrameError::Io {
                path: dir.to_path_buf(),
                source,
            })
            .and_then(|()| write_png(&path, width as u32, height as u32, rgba));
        if let Err(e) = r {
            if !self.frame_failed.swap(true, Ordering::SeqCst) {
                note(&format!("--frames: cannot write a frame: {e}"));
            }
        }
    }

    /// How many frames were written or tried.
    pub fn frames(&self) -> u64 {
        *lock(&self.next_frame)
    }
}

impl super::PepperState {
    /// The Graphics2D context bound to the instance (0: none).
    pub fn bound_graphics(&self) -> i32 {
        *lock(&self.gfx.bound)
    }

    /// How many frames `--frames` has written (or tried to).
    pub fn frames_written(&self) -> u64 {
        self.gfx.frames()
    }
}
