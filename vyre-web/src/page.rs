//! The page's graph, the buffer blur of `examples/blur.rs` (same kernels,
//! same files), and the two functions the page calls.

use std::cell::RefCell;
use std::rc::Rc;

use vyre_graph::{DispatchConfig, Gpu, GpuOptions, graph};
use wasm_bindgen::prelude::*;

graph! {
    /// Gaussian blur of an RGBA8 image (one u32 a pixel, red in the low
    /// byte) into RGBA f32 in 0..1, edges clamped. `n` is the pixel count;
    /// `params` gives the size and the weights.
    pub struct Blur;

    kernel horizontal = file "../examples/kernels/blur/blur.wgsl" entry "horizontal";
    kernel vertical = file "../examples/kernels/blur/blur.wgsl" entry "vertical";

    input image[n];
    uniform params;
    intermediate rows[n];
    output blurred[n];

    node horizontal(params: params, image: image, rows: rows) over n;
    node vertical(params: params, rows: rows, blurred: blurred) over n;
}

/// The most taps on each side of the centre the kernels' weights hold.
const MAX_RADIUS: u32 = 15;

thread_local! {
    /// The graph (holding its device), made once by [`start`].
    static PAGE: RefCell<Option<Rc<Blur>>> = const { RefCell::new(None) };
}

fn error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// Opens the browser's WebGPU device and compiles the blur's pipelines;
/// returns the adapter, as one line.
///
/// # Errors
///
/// No WebGPU adapter or device (`BackendError::NoAdapter`, ...), or a
/// pipeline the browser refuses.
#[wasm_bindgen]
pub async fn start() -> Result<String, JsError> {
    let gpu = Gpu::new_async(GpuOptions::default()).await.map_err(error)?;
    let blur = Blur::new_async(&gpu).await.map_err(error)?;
    let adapter = gpu.adapter().to_string();
    PAGE.with(|page| *page.borrow_mut() = Some(Rc::new(blur)));
    Ok(adapter)
}

/// Blurs `rgba` (`width * height` pixels, 4 bytes each, as a canvas's
/// `ImageData` holds them) with a Gaussian of `radius` taps on each side
/// and `sigma`; returns the blurred image as 4 floats a pixel in 0..1.
///
/// # Errors
///
/// [`start`] not called, a size that does not match the pixels, a radius
/// over 15, or the run's own error.
#[wasm_bindgen]
pub async fn blur(
    rgba: Vec<u8>,
    width: u32,
    height: u32,
    radius: u32,
    sigma: f32,
) -> Result<Vec<f32>, JsError> {
    let Some(graph) = PAGE.with(|page| page.borrow().clone()) else {
        return Err(JsError::new("call start() before blur()"));
    };
    let pixels = u64::from(width) * u64::from(height);
    if rgba.len() as u64 != pixels * 4 {
        return Err(JsError::new(&format!(
            "{width} x {height} pixels need {} bytes of RGBA, not {}",
            pixels * 4,
            rgba.len()
        )));
    }
    if radius > MAX_RADIUS {
        return Err(JsError::new(&format!(
            "a radius of at most {MAX_RADIUS}, not {radius}"
        )));
    }
    let image: Vec<u32> = rgba
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut params = Params {
        width,
        height,
        radius,
        ..Params::default()
    };
    for (k, w) in gaussian_weights(radius, sigma).into_iter().enumerate() {
        params.weights[k / 4][k % 4] = w;
    }
    let out = graph
        .run_async(&DispatchConfig::default(), &image, &params)
        .await
        .map_err(error)?;
    Ok(out.blurred.into_iter().flatten().collect())
}

/// Normalised Gaussian weights of the centre and of the taps 1..=radius
/// away on each side (as `examples/blur.rs` computes them).
fn gaussian_weights(radius: u32, sigma: f32) -> Vec<f32> {
    let mut weights: Vec<f32> = (0..=radius)
        .map(|k| (-((k * k) as f32) / (2.0 * sigma * sigma)).exp())
        .collect();
    let centre = weights.first().copied().unwrap_or(0.0);
    let sum = centre + 2.0 * weights.iter().skip(1).sum::<f32>();
    weights.iter_mut().for_each(|w| *w /= sum);
    weights
}
