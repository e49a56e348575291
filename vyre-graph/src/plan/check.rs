//! The checks of one run before anything is planned: the device can take
//! it, its feeds and sinks are the graph's (count, sizes, texels, resident
//! handles' device, size and usage), and the problem size; and the problem
//! size the inputs give when a run does not say it.

use super::program::Program;
use super::sizing::override_grids;
use crate::device::buffer::round4;
use crate::device::gpu::Gpu;
use crate::device::io::{Feed, Sink};
use crate::device::transfer::Receive;
use crate::spec::config::DispatchConfig;
use crate::spec::error::{BackendError, Result};
use crate::spec::{BufferClass, BufferSpec, TextureDimension, TextureShape};

impl Program {
    /// The fewest bytes any kernel binding of buffer `b` accepts (a vector
    /// view of a shorter buffer needs one whole vector).
    pub(crate) fn least_binding_bytes(&self, b: usize) -> u64 {
        self.spec
            .nodes
            .iter()
            .flat_map(|node| {
                let kernel = self.spec.kernels.get(node.kernel);
                node.bindings
                    .iter()
                    .filter(move |nb| nb.buffer == b)
                    .map(move |nb| {
                        kernel
                            .and_then(|k| {
                                k.bindings
                                    .iter()
                                    .find(|kb| kb.group == nb.group && kb.binding == nb.binding)
                            })
                            .map_or(0, |kb| kb.min_binding_size)
                    })
            })
            .max()
            .unwrap_or(0)
    }

    /// Step 1 of a run, before anything is planned: the device can take a
    /// run now, the feeds and sinks are this graph's at problem size `n`,
    /// and the grids of a run whose config overrides them fit (returned:
    /// this run's own, `None` without overrides).
    ///
    /// # Errors
    /// [`BackendError::Abandoned`], [`BackendError::DeviceBusy`], every
    /// error of `check_io`, and the grid errors of an override.
    pub(crate) fn check_run(
        &self,
        gpu: &Gpu,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<Option<Vec<[u32; 3]>>> {
        gpu.check_ready()?;
        self.check_io(gpu, n, feeds, sinks, config)?;
        override_grids(gpu, self, n, config)
    }

    /// The checks of a stacked run of size `n` (`run_batch`), whose
    /// instances each passed [`Program::check_run`] and whose size passed
    /// every limit: the device, and this run's grids.
    pub(crate) fn check_stacked(
        &self,
        gpu: &Gpu,
        n: u64,
        config: &DispatchConfig,
    ) -> Result<Option<Vec<[u32; 3]>>> {
        gpu.check_ready()?;
        config.check_waits()?;
        override_grids(gpu, self, n, config)
    }

    /// The problem size the host inputs give (see `Graph::infer_problem_size`).
    pub(crate) fn infer_problem_size(&self, feeds: &[Feed<'_>]) -> Result<u64> {
        self.check_feed_count(feeds.len())?;
        // The first input of the form K * n whose length is no such size: the
        // error to give when no input fixes n.
        let mut mismatch: Option<String> = None;
        for (feed, &b) in feeds.iter().zip(&self.host_inputs) {
            let buffer = &self.spec.buffers[b];
            if buffer.class == BufferClass::Uniform {
                continue;
            }
            if let Some(shape) = buffer.texture_shape() {
                match texture_problem_size(&buffer.name, shape, feed) {
                    Ok(Some(n)) => return Ok(n),
                    Ok(None) => {}
                    Err(reason) => {
                        mismatch.get_or_insert(reason);
                    }
                }
                if !matches!(feed, Feed::Device(_)) {
                    continue;
                }
            }
            let elements = match feed {
                Feed::Host(bytes) => checked_element_count(
                    &buffer.name,
                    (bytes.len() as u64).saturating_sub(u64::from(buffer.header_bytes)),
                    buffer.element_size,
                )?,
                Feed::Texture(_) => continue,
                Feed::Device(h) => {
                    h.size().saturating_sub(u64::from(buffer.header_bytes))
                        / u64::from(buffer.element_size.max(1))
                }
            };
            let Some(n) = buffer.len.solve(elements) else {
                if mismatch.is_none() && buffer.len.solve(0).is_some() {
                    mismatch = Some(format!(
                        "input `{}` holds {elements} elements, but its length is {}, so the problem size would not be whole; pass a multiple of {} elements",
                        buffer.name, buffer.len, buffer.len.mul
                    ));
                }
                continue;
            };
            if n == 0 && !self.runs_empty() {
                return Err(BackendError::InvalidProblemSize {
                    reason: format!(
                        "input `{}` is empty, so the problem size is 0, but {}; pass at least one element",
                        buffer.name,
                        self.zero_reason()
                    ),
                });
            }
            return Ok(n);
        }
        Err(BackendError::InvalidProblemSize {
            reason: mismatch.unwrap_or_else(|| {
                format!(
                    "no input of graph `{}` has a length of the form K*n, so the problem size cannot be inferred; pass n explicitly",
                    self.spec.name
                )
            }),
        })
    }

    pub(crate) fn check_feed_count(&self, given: usize) -> Result<()> {
        if given != self.host_inputs.len() {
            return Err(BackendError::InputCountMismatch {
                graph: self.spec.name.to_string(),
                expected: self.host_inputs.len(),
                given,
                names: self.names(&self.host_inputs),
            });
        }
        Ok(())
    }

    pub(crate) fn names(&self, buffers: &[usize]) -> String {
        buffers
            .iter()
            .map(|&b| &*self.spec.buffers[b].name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether a run at problem size 0 has its outputs without running
    /// anything: every host output is empty at n = 0 or holds its
    /// [`BufferSpec::empty_value`] there (a reduction's identity over an
    /// empty source), and none is a texture or an append buffer.
    pub(crate) fn runs_empty(&self) -> bool {
        self.host_outputs.iter().all(|&b| {
            let spec = &self.spec.buffers[b];
            spec.texture.is_none()
                && spec.append.is_none()
                && (spec.len.eval(0) == 0 || spec.empty_value.is_some())
        })
    }

    /// Why a run at problem size 0 is refused when [`Program::runs_empty`]
    /// says no: the first output that has no value there.
    fn zero_reason(&self) -> String {
        let why = self.host_outputs.iter().find_map(|&b| {
            let spec = &self.spec.buffers[b];
            let name = &spec.name;
            if spec.texture.is_some() {
                Some(format!("output `{name}` (a texture)"))
            } else if spec.append.is_some() {
                Some(format!("output `{name}` (an append buffer)"))
            } else if spec.len.eval(0) > 0 && spec.empty_value.is_none() {
                Some(format!("output `{name}` ({} elements)", spec.len.eval(0)))
            } else {
                None
            }
        });
        format!(
            "graph `{}` has no value at n = 0 for {}",
            self.spec.name,
            why.unwrap_or_else(|| "its outputs".into())
        )
    }

    /// The error of every way to run at problem size 0 given explicitly
    /// when [`Program::runs_empty`] says no (an inferred size of 0 says
    /// which input is empty, with the same reason).
    pub(crate) fn zero_problem_size(&self) -> BackendError {
        BackendError::InvalidProblemSize {
            reason: format!(
                "{} and was asked to run with problem size 0; pass at least one element",
                self.zero_reason()
            ),
        }
    }

    /// Check the feeds and sinks that do not depend on the plan.
    pub(crate) fn check_io(
        &self,
        gpu: &Gpu,
        n: u64,
        feeds: &[Feed<'_>],
        sinks: &[Sink<'_>],
        config: &DispatchConfig,
    ) -> Result<()> {
        config.check_waits()?;
        self.check_feed_count(feeds.len())?;
        if sinks.len() != self.host_outputs.len() {
            return Err(BackendError::OutputCountMismatch {
                graph: self.spec.name.to_string(),
                expected: self.host_outputs.len(),
                given: sinks.len(),
                names: self.names(&self.host_outputs),
            });
        }
        if n == 0 && !self.runs_empty() {
            return Err(self.zero_problem_size());
        }
        for (feed, &b) in feeds.iter().zip(&self.host_inputs) {
            let spec = &self.spec.buffers[b];
            let expected = spec.bytes(n);
            if !matches!(feed, Feed::Texture(_)) {
                check_texture_io(spec, n, feed.len(), Given::of(feed))?;
            }
            match feed {
                Feed::Texture(h) => match spec.texture_shape() {
                    Some(shape) => {
                        h.check(gpu, &spec.name, shape, n, wgpu::TextureUsages::COPY_SRC)?;
                    }
                    None => return Err(not_a_texture(&spec.name)),
                },
                Feed::Host(bytes) => {
                    let body = (bytes.len() as u64).saturating_sub(u64::from(spec.header_bytes));
                    checked_element_count(&spec.name, body, spec.element_size)?;
                    if bytes.len() as u64 != expected {
                        return Err(BackendError::LengthMismatch {
                            buffer: spec.name.to_string(),
                            n,
                            expected,
                            actual: bytes.len() as u64,
                        });
                    }
                }
                Feed::Device(h) => {
                    // An `Input` handle is bound in place; others are copied.
                    let usage = if spec.class == BufferClass::Input {
                        wgpu::BufferUsages::STORAGE
                    } else {
                        wgpu::BufferUsages::COPY_SRC
                    };
                    h.check(gpu, &spec.name, expected, usage)?;
                    let least = self.least_binding_bytes(b);
                    // At n = 0 nothing is bound (`run/empty.rs`).
                    if spec.class == BufferClass::Input && n > 0 && h.size() < least {
                        return Err(BackendError::InvalidHandle {
                            buffer: spec.name.to_string(),
                            reason: format!(
                                "it holds {} bytes, but a kernel binds it as vectors (a vector view such as `array<vec4<f32>>`), which needs at least {least}; make the handle at least {least} bytes (its extra bytes are not read)",
                                h.size()
                            ),
                        });
                    }
                }
            }
        }
        let mut readback = 0u64;
        for (sink, &b) in sinks.iter().zip(&self.host_outputs) {
            let spec = &self.spec.buffers[b];
            let expected = self.buffer_bytes(b, n);
            if let Sink::Host(dst) = sink {
                check_texture_io(spec, n, dst.len() as u64, Given::Host)?;
            }
            if let Sink::Device(h) = sink {
                check_texture_io(spec, n, h.size(), Given::Resident)?;
            }
            match sink {
                Sink::Texture(h) => match spec.texture_shape() {
                    Some(shape) => {
                        h.check(gpu, &spec.name, shape, n, wgpu::TextureUsages::COPY_DST)?;
                    }
                    None => return Err(not_a_texture(&spec.name)),
                },
                Sink::Host(dst) => {
                    if dst.len() as u64 != expected {
                        return Err(BackendError::LengthMismatch {
                            buffer: spec.name.to_string(),
                            n,
                            expected,
                            actual: dst.len() as u64,
                        });
                    }
                    readback = readback.saturating_add(expected);
                }
                Sink::Vector(v) => {
                    check_vec_sink(spec, n, expected, v.target)?;
                    readback = readback.saturating_add(expected);
                }
                // An output empty at this size fits an empty handle.
                Sink::Device(h) => h.check(
                    gpu,
                    &spec.name,
                    if expected == 0 { 0 } else { round4(expected) },
                    wgpu::BufferUsages::COPY_DST,
                )?,
                Sink::Skip => {}
            }
        }
        if let Some(limit) = config.max_output_bytes
            && readback > limit
        {
            return Err(BackendError::OutputTooLarge {
                requested: readback,
                limit,
            });
        }
        Ok(())
    }
}

/// A vector sink must hold whole elements of output `spec` (`bytes` at
/// problem size `n`; an append output's items one by one), and a header no
/// larger than the output's.
fn check_vec_sink(spec: &BufferSpec, n: u64, bytes: u64, v: &dyn Receive) -> Result<()> {
    let mismatch = |reason: String| BackendError::SinkTypeMismatch {
        buffer: spec.name.to_string(),
        reason,
    };
    let size = v.element_size() as u64;
    let header = if spec.texture.is_some() {
        0
    } else {
        u64::from(spec.header_bytes)
    };
    if v.header_size() as u64 > header {
        return Err(mismatch(format!(
            "its header takes {header} bytes but the vector's header type {}; read it into a `Headed` of the output's own header type",
            match v.header_size() {
                1 => "1 byte".to_string(),
                s => format!("{s} bytes"),
            }
        )));
    }
    // An append output hands over `count` items, any number of them.
    let unit = if spec.append.is_some() {
        u64::from(spec.element_size)
    } else {
        bytes.saturating_sub(header)
    };
    if size == 0 || !unit.is_multiple_of(size) {
        let what = if spec.append.is_some() {
            format!("each item is {unit} bytes")
        } else {
            format!("its elements take {unit} bytes at problem size {n}")
        };
        return Err(mismatch(format!(
            "{what}, not a whole number of the vector's {size}-byte elements; read it into a vector of the output's element type"
        )));
    }
    Ok(())
}

/// A resident texture given for a buffer.
fn not_a_texture(name: &str) -> BackendError {
    BackendError::InvalidTexture {
        buffer: name.to_string(),
        reason: format!(
            "`{name}` is a buffer, not a texture; pass host elements or a `GpuBufferHandle`"
        ),
    }
}

/// What a run gave for a texture.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Given {
    /// Host bytes (a feed or a sink).
    Host,
    /// A resident buffer (`GpuBufferHandle`).
    Resident,
}

impl Given {
    /// What `feed` gives.
    fn of(feed: &Feed<'_>) -> Self {
        match feed {
            Feed::Device(_) => Given::Resident,
            _ => Given::Host,
        }
    }
}

/// A texture's host data must be exactly its texels; a resident buffer
/// cannot stand in for a texture.
fn check_texture_io(spec: &BufferSpec, n: u64, bytes: u64, given: Given) -> Result<()> {
    let Some(shape) = spec.texture_shape() else {
        return Ok(());
    };
    let texel = u64::from(shape.format.texel_bytes());
    let given = if given == Given::Resident {
        format!(
            "passed a resident buffer (`GpuBufferHandle`) of {bytes} bytes, which cannot stand in for a texture (pass a `GpuTextureHandle`, e.g. from `Graph::create_texture`, or host texels)"
        )
    } else if bytes == shape.texels(n).saturating_mul(texel) {
        return Ok(());
    } else if bytes.is_multiple_of(texel) {
        format!("passed {} texels", bytes / texel)
    } else {
        format!("passed {bytes} bytes, not whole {texel}-byte texels")
    };
    Err(BackendError::TextureMismatch {
        texture: spec.name.to_string(),
        n,
        extent: shape.describe(n),
        format: shape.format.name(),
        given,
    })
}

pub(crate) fn checked_element_count(name: &str, bytes: u64, element_size: u32) -> Result<u64> {
    let size = u64::from(element_size.max(1));
    if !bytes.is_multiple_of(size) {
        return Err(BackendError::MisalignedInput {
            buffer: name.to_string(),
            len: bytes,
            element_size,
        });
    }
    Ok(bytes / size)
}

/// The problem size a run's feed of input texture `shape` gives, when one
/// side of the texture is `K * n` and the others are constants: from a
/// resident texture's extent or from the count of host texels. `Err` holds
/// the reason for a host feed that gives no such size (for the error when
/// no input fixes `n`); `Ok(None)` when the feed says nothing.
fn texture_problem_size(
    name: &str,
    shape: &TextureShape,
    feed: &Feed<'_>,
) -> Result<Option<u64>, String> {
    match feed {
        Feed::Texture(h) => {
            let size = h.extent().map(u64::from);
            let sides = [shape.width, shape.height, shape.depth_or_array_layers];
            let n = sides
                .iter()
                .zip(size)
                .find(|(e, _)| e.depends_on_n())
                .and_then(|(e, s)| e.solve(s));
            Ok(n.filter(|&n| n > 0))
        }
        Feed::Host(bytes) => {
            let texel = u64::from(shape.format.texel_bytes());
            let len = bytes.len() as u64;
            let texels = len / texel;
            match shape.solve(texels) {
                Some(n) if n > 0 && len.is_multiple_of(texel) => Ok(Some(n)),
                _ if shape.solve(0).is_some() => Err(format!(
                    "input texture `{name}` is {} texels ({}, {}), but the run passed {len} bytes ({texels} whole texels), which is no such size; pass {} texels, x fastest, then y, then layer or z",
                    shape.declared(),
                    shape.format.name(),
                    shape.dimension.keyword(),
                    match shape.dimension {
                        TextureDimension::D1 => "width",
                        TextureDimension::D2 => "width * height",
                        _ => "width * height * depth",
                    }
                )),
                _ => Ok(None),
            }
        }
        Feed::Device(_) => Ok(None),
    }
}
