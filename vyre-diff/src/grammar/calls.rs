//! The typed calls of a case's module: the generated graph's own API
//! (`run`, `run_resident`, `resident_outputs` with `record`, `run_batch`),
//! each taking the host inputs as bytes and giving the outputs as bytes,
//! and `check`, which hands them to the differential run.

use std::fmt::Write;

use super::ir::*;

/// Statements turning `inputs` (bytes) into typed values, and the
/// arguments of a typed call.
fn arguments(inputs: &[(String, &'static str)], at: &str) -> (String, Vec<String>) {
    let mut s = String::new();
    let mut args = Vec::new();
    for (k, (name, t)) in inputs.iter().enumerate() {
        if *t == "uniform" {
            let _ = writeln!(
                s,
                "    let {name}: fused::P = vyre_graph::bytemuck::pod_read_unaligned(&{at}[{k}]);"
            );
            args.push(format!("&{name}"));
        } else {
            let t = if *t == "E" { "fused::E" } else { t };
            let _ = writeln!(s, "    let {name}: Vec<{t}> = crate::vec_of(&{at}[{k}]);");
            args.push(format!("&{name}[..]"));
        }
    }
    (s, args)
}

/// `vec![..]` of the outputs' bytes: `field` maps an output's name to
/// the expression of its bytes.
fn gather(outputs: &[&Buffer], field: &dyn Fn(&str) -> String) -> String {
    let v: Vec<String> = outputs.iter().map(|b| field(&b.name)).collect();
    format!("vec![{}]", v.join(", "))
}

/// The typed functions and `check` of the case.
pub fn calls(g: &Graph, inputs: &[(String, &'static str)], outputs: &[&Buffer]) -> String {
    let mut s = String::new();
    let (convert, args) = arguments(inputs, "inputs");
    let args = args.join(", ");
    let host = gather(outputs, &|b| format!("crate::bytes_of(&out.{b})"));
    let device = gather(outputs, &|b| format!("out.{b}.read(gpu)?"));
    let sig = "-> Result<crate::Outputs, vyre_graph::BackendError>";
    let _ = writeln!(
        s,
        "pub fn typed(g: &fused::Fused, inputs: &[Vec<u8>]) {sig} {{\n{convert}    let out = g.run({args})?;\n    Ok({host})\n}}"
    );
    let _ = writeln!(
        s,
        "pub fn typed_resident(g: &fused::Fused, inputs: &[Vec<u8>]) {sig} {{\n{convert}    let gpu = g.graph().gpu();\n    let out = g.run_resident({args})?;\n    Ok({device})\n}}"
    );
    let _ = writeln!(
        s,
        "pub fn typed_record(g: &fused::Fused, n: u64, inputs: &[Vec<u8>]) {sig} {{\n{convert}    let gpu = g.graph().gpu();\n    let config = vyre_graph::DispatchConfig::default();\n    let out = g.resident_outputs(&config, n)?;\n    let mut encoder = gpu.device().create_command_encoder(&Default::default());\n    let run = g.record(&mut encoder, &config, &out, {args})?;\n    let submission = gpu.queue().submit([encoder.finish()]);\n    let _ = run.finish(&submission);\n    Ok({device})\n}}"
    );
    // A batch: each instance's values, then the tuples that borrow them.
    let (convert, _) = arguments(inputs, "i");
    // Bound by reference from `owned`: a uniform is already `&P`.
    let one: Vec<String> = inputs
        .iter()
        .map(|(n, t)| {
            if *t == "uniform" {
                n.clone()
            } else {
                format!("&{n}[..]")
            }
        })
        .collect();
    let names: Vec<&str> = inputs.iter().map(|(n, _)| n.as_str()).collect();
    let (owned, each) = if names.len() == 1 {
        (names[0].to_owned(), one[0].clone())
    } else {
        (
            format!("({})", names.join(", ")),
            format!("({})", one.join(", ")),
        )
    };
    let pattern = if names.len() == 1 {
        names[0].to_owned()
    } else {
        format!("({})", names.join(", "))
    };
    let _ = writeln!(
        s,
        "pub fn typed_batch(g: &fused::Fused, instances: &[(u64, Vec<Vec<u8>>)]) -> Result<Vec<crate::Outputs>, vyre_graph::BackendError> {{\n    let owned: Vec<_> = instances.iter().map(|(_, i)| {{\n{convert}    {owned}\n    }}).collect();\n    let args: Vec<_> = owned.iter().map(|{pattern}| {each}).collect();\n    let outs = g.run_batch(&vyre_graph::DispatchConfig::default(), &args)?;\n    Ok(outs.into_iter().map(|out| {host}).collect())\n}}"
    );
    // `record` finishes without a check: an overflow would go unseen.
    let unchecked = g
        .buffers
        .iter()
        .any(|b| b.append.is_some() && b.len != Len::N);
    let record = if unchecked {
        "None"
    } else {
        "Some(&|n, i| typed_record(&fused, n, i))"
    };
    let _ = writeln!(
        s,
        "pub fn check(ctx: &mut crate::Ctx) {{\n    let case = crate::Case {{ name: NAME, source: SOURCE, inputs: INPUTS, large: LARGE, signed_rem: SIGNED_REM, refuses_zero: REFUSES_ZERO }};\n    let fused = match fused::Fused::new(ctx.gpu()) {{ Ok(g) => g, Err(e) => return ctx.failed_new(&case, \"fused\", &e) }};\n    let unfused = match unfused::Unfused::new(ctx.gpu()) {{ Ok(g) => g, Err(e) => return ctx.failed_new(&case, \"unfused\", &e) }};\n    let api = crate::Api {{\n        run: &|_, i| typed(&fused, i),\n        resident: Some(&|_, i| typed_resident(&fused, i)),\n        record: {record},\n        batch: Some(&|b| typed_batch(&fused, b)),\n    }};\n    ctx.check_case(&case, fused.graph(), unfused.graph(), &api, &oracle);\n}}"
    );
    s
}
