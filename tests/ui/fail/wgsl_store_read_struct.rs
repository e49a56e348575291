// Issue 16: a store into a read-only struct binding. The error stub's
// types are worked out on naga's thread, which once made a span there and
// panicked ("internal error: naga panicked"); now it is the WGSL error.
use vyre_graph::graph;

graph! { pub struct G;
  kernel k = wgsl { struct Globals { i: i32 } @group(0) @binding(0) var<storage, read> globals: Globals; @compute @workgroup_size(1) fn main() { globals.i = 1; } };
  input g[1]; node k(globals: g) over 1; }

fn main() {}
