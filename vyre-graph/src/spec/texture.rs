//! Graph textures and samplers (defined in `vyre-analysis`).

pub use vyre_analysis::spec::{AddressMode, Filter, SamplerSpec, TextureResource, TextureShape};
