// The CPU reference of the page's blur, in the order of operations of
// examples/kernels/blur/blur.wgsl (a horizontal pass into f32 rows, then a
// vertical pass, edges clamped), in f32 (Math.fround) as the GPU computes.
// Shared by the page (index.html) and its test (../page_test.mjs).

/** Normalised Gaussian weights of the centre and of the taps 1..=radius away. */
export function gaussianWeights(radius, sigma) {
  const f = Math.fround;
  const w = [];
  for (let k = 0; k <= radius; k++) w.push(f(Math.exp(f(-(k * k) / f(2 * sigma * sigma)))));
  let sum = 0;
  for (let k = 1; k <= radius; k++) sum = f(sum + w[k]);
  sum = f(w[0] + f(2 * sum));
  return w.map((v) => f(v / sum));
}

/** Blurs `rgba` (Uint8ClampedArray or Uint8Array, 4 bytes a pixel); returns a Float32Array, 4 floats a pixel in 0..1. */
export function blurReference(rgba, width, height, radius, sigma) {
  const f = Math.fround;
  const w = gaussianWeights(radius, sigma);
  const at = (i, c) => f(rgba[4 * i + c] / 255);
  const rows = new Float32Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      for (let c = 0; c < 4; c++) {
        let acc = f(w[0] * at(i, c));
        for (let k = 1; k <= radius; k++) {
          const left = at(y * width + Math.max(x - k, 0), c);
          const right = at(y * width + Math.min(x + k, width - 1), c);
          acc = f(acc + f(w[k] * f(left + right)));
        }
        rows[4 * i + c] = acc;
      }
    }
  }
  const out = new Float32Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      for (let c = 0; c < 4; c++) {
        let acc = f(w[0] * rows[4 * i + c]);
        for (let k = 1; k <= radius; k++) {
          const up = rows[4 * (Math.max(y - k, 0) * width + x) + c];
          const down = rows[4 * (Math.min(y + k, height - 1) * width + x) + c];
          acc = f(acc + f(w[k] * f(up + down)));
        }
        out[4 * i + c] = acc;
      }
    }
  }
  return out;
}

/** The largest absolute difference of two arrays (Infinity when their lengths differ, NaN when one holds NaN). */
export function maxAbsError(got, want) {
  if (got.length !== want.length) return Infinity;
  let max = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (Number.isNaN(d)) return NaN;
    if (d > max) max = d;
  }
  return max;
}
