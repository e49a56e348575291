//! Opening device sets: filters, lists, their errors, a graph that fails
//! on one device, and a set of one device beside `Graph::run_batch`.
