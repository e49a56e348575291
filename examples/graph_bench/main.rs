mod hand;
fn main() {}
