//! Choosing an adapter: natively as wgpu's environment variables say
//! (`WGPU_BACKEND`, `WGPU_ADAPTER_NAME`, `WGPU_POWER_PREF`); in a browser,
//! which has no environment, the one WebGPU offers.

use crate::spec::error::{BackendError, Result};

/// The instance's options: natively from `WGPU_BACKEND` and wgpu's other
/// variables; in a browser, which has no environment, wgpu's defaults
/// (WebGPU).
pub(crate) fn instance_descriptor() -> wgpu::InstanceDescriptor {
    #[cfg(not(target_arch = "wasm32"))]
    return wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    #[cfg(target_arch = "wasm32")]
    return wgpu::InstanceDescriptor::new_without_display_handle();
}

/// Choose an adapter: in a browser, the one `navigator.gpu` offers
/// ([`BackendError::NoAdapter`] saying that WebGPU is unavailable when
/// there is none).
#[cfg(target_arch = "wasm32")]
pub(crate) async fn pick_adapter(
    instance: &wgpu::Instance,
    power_preference: wgpu::PowerPreference,
) -> Result<wgpu::Adapter> {
    request_adapter(instance, power_preference)
        .await
        .map_err(|e| BackendError::NoAdapter {
            reason: format!("WebGPU offered no adapter: {e}"),
        })
}

/// Choose an adapter: `WGPU_ADAPTER_NAME` first (an error, not a panic, when
/// nothing matches), else the power preference from `WGPU_POWER_PREF` or
/// `power_preference`.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) async fn pick_adapter(
    instance: &wgpu::Instance,
    power_preference: wgpu::PowerPreference,
) -> Result<wgpu::Adapter> {
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let wanted = wanted.to_lowercase();
        let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        return adapters
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&wanted))
            .ok_or_else(|| BackendError::NoAdapter {
                reason: format!(
                    "WGPU_ADAPTER_NAME={wanted:?} matches none of the adapters found: [{}]",
                    names.join(", ")
                ),
            });
    }
    let power_preference = wgpu::PowerPreference::from_env().unwrap_or(power_preference);
    request_adapter(instance, power_preference)
        .await
        .map_err(|e| BackendError::NoAdapter {
            reason: e.to_string(),
        })
}

/// wgpu's adapter request with `power_preference`.
async fn request_adapter(
    instance: &wgpu::Instance,
    power_preference: wgpu::PowerPreference,
) -> std::result::Result<wgpu::Adapter, wgpu::RequestAdapterError> {
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference,
            force_fallback_adapter: false,
            compatible_surface: None,
            apply_limit_buckets: false,
        })
        .await
}

/// The name an adapter summary gives: wgpu's `name`, and in a browser what
/// the browser tells of its adapter (`browser_adapter_name`) where it
/// tells anything.
pub(crate) fn adapter_name(device: &wgpu::Device, name: String) -> String {
    #[cfg(target_arch = "wasm32")]
    return browser_adapter_name(device).unwrap_or(name);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = device;
        name
    }
}

/// What the browser says of its adapter, for an adapter summary's name,
/// which wgpu fills on the web with the adapter's `description` alone (an
/// empty string in most browsers): the non-empty ones of
/// `GPUDevice.adapterInfo`'s `vendor`, `architecture`, `device` and
/// `description`, e.g. "google swiftshader" in headless Chromium. `None`
/// when the browser says nothing (or has no `adapterInfo`).
#[cfg(target_arch = "wasm32")]
pub(crate) fn browser_adapter_name(device: &wgpu::Device) -> Option<String> {
    use js_sys::Reflect;
    use wasm_bindgen::JsValue;

    let device: &JsValue = device.as_webgpu()?.as_ref();
    // `Reflect::get` turns a throwing getter into an `Err`: nothing here can
    // abort the page.
    let info = Reflect::get(device, &JsValue::from_str("adapterInfo")).ok()?;
    if info.is_undefined() || info.is_null() {
        return None;
    }
    let words: Vec<String> = ["vendor", "architecture", "device", "description"]
        .iter()
        .filter_map(|field| Reflect::get(&info, &JsValue::from_str(field)).ok())
        .filter_map(|value| value.as_string())
        .map(|word| word.trim().to_string())
        .filter(|word| !word.is_empty())
        .collect();
    let mut name: Vec<String> = Vec::new();
    // A description often repeats the vendor or the architecture.
    for word in words {
        if !name.iter().any(|w| w.eq_ignore_ascii_case(&word)) {
            name.push(word);
        }
    }
    (!name.is_empty()).then(|| name.join(" "))
}
