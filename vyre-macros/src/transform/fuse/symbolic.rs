//! Polynomials over 32-bit integers with wrapping arithmetic: what an index
//! expression evaluates to, in terms of the invocation's position.
//!
//! WGSL's `u32` and `i32` addition, subtraction and multiplication wrap
//! modulo 2^32 (two's complement for `i32`), so both are the ring of
//! integers modulo 2^32 and a polynomial with `u32` coefficients computed
//! with wrapping operations is exact: two expressions with the same
//! polynomial have the same bits for every value of the atoms. Division,
//! remainders, shifts right and bit operations are not ring operations; the
//! evaluator (`index.rs`) leaves them as opaque atoms.

use std::collections::BTreeMap;

/// A value the polynomial is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// The linear workgroup index (`workgroup_id.x` once the fold wrapper
    /// has run).
    WorkgroupX,
    /// `local_invocation_id.x`.
    LocalX,
    /// The number of workgroups (`num_workgroups.x` once folded).
    Workgroups,
    /// The workgroup size's x, when it comes from an override.
    WorkgroupSize,
    /// Override number `.0` of the module (fixed per pipeline).
    Override(usize),
    /// Any other integer value: expression `.1` evaluated in frame `.0`
    /// (component `.2` of a vector). One handle has one value wherever an
    /// expression tree refers to it, so the atom stands for that value.
    Opaque(u32, usize, u8),
}

/// The most terms and the highest degree kept; past them the evaluator
/// gives up (an index is never that complicated).
const MAX_TERMS: usize = 64;
const MAX_DEGREE: usize = 8;

/// A polynomial: monomials (sorted atoms, repeated for powers) to nonzero
/// coefficients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly(BTreeMap<Vec<Atom>, u32>);

impl Poly {
    /// The constant `c`.
    pub fn constant(c: u32) -> Poly {
        let mut p = Poly::default();
        p.add_term(Vec::new(), c);
        p
    }

    /// The atom `a`.
    pub fn atom(a: Atom) -> Poly {
        let mut p = Poly::default();
        p.add_term(vec![a], 1);
        p
    }

    fn add_term(&mut self, monomial: Vec<Atom>, c: u32) {
        let entry = self.0.entry(monomial).or_insert(0);
        *entry = entry.wrapping_add(c);
        self.0.retain(|_, c| *c != 0);
    }

    /// The constant value, when the polynomial is one.
    pub fn as_constant(&self) -> Option<u32> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    fn bounded(self) -> Option<Poly> {
        let ok = self.0.len() <= MAX_TERMS && self.0.keys().all(|m| m.len() <= MAX_DEGREE);
        ok.then_some(self)
    }

    /// `self + other`.
    pub fn add(&self, other: &Poly) -> Option<Poly> {
        let mut out = self.clone();
        for (m, &c) in &other.0 {
            out.add_term(m.clone(), c);
        }
        out.bounded()
    }

    /// `-self`.
    pub fn neg(&self) -> Poly {
        Poly(
            self.0
                .iter()
                .map(|(m, &c)| (m.clone(), c.wrapping_neg()))
                .collect(),
        )
    }

    /// `self - other`.
    pub fn sub(&self, other: &Poly) -> Option<Poly> {
        self.add(&other.neg())
    }

    /// `self * other`.
    pub fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, &c) in &self.0 {
            for (n, &d) in &other.0 {
                if m.len() + n.len() > MAX_DEGREE {
                    return None;
                }
                let mut monomial: Vec<Atom> = m.iter().chain(n).copied().collect();
                monomial.sort_unstable();
                out.add_term(monomial, c.wrapping_mul(d));
            }
            if out.0.len() > MAX_TERMS {
                return None;
            }
        }
        out.bounded()
    }
}

/// The invocation's own linear index, `workgroup * W + local`, with `W`
/// the workgroup size's x (`None`: it comes from an override).
pub fn own_index(workgroup_size_x: Option<u32>) -> Poly {
    let mut p = Poly::default();
    match workgroup_size_x {
        Some(w) => p.add_term(vec![Atom::WorkgroupX], w),
        None => p.add_term(vec![Atom::WorkgroupX, Atom::WorkgroupSize], 1),
    }
    p.add_term(vec![Atom::LocalX], 1);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(x: Atom) -> Poly {
        Poly::atom(x)
    }

    #[test]
    fn ring_laws_with_wrapping() {
        let wx = a(Atom::WorkgroupX);
        let lx = a(Atom::LocalX);
        let w = Poly::constant(256);
        let own = wx.mul(&w).unwrap().add(&lx).unwrap();
        assert_eq!(own, own_index(Some(256)));
        assert_ne!(own, own_index(Some(64)));
        // (x + 1) - 1 == x; x - x == 0; 2^31 * 2 == 0 (wraps).
        let one = Poly::constant(1);
        assert_eq!(own.add(&one).unwrap().sub(&one).unwrap(), own);
        assert_eq!(own.sub(&own).unwrap().as_constant(), Some(0));
        let big = Poly::constant(1 << 31);
        assert_eq!(big.mul(&Poly::constant(2)).unwrap(), Poly::default());
        // u32::MAX * x == -x.
        let m = Poly::constant(u32::MAX).mul(&lx).unwrap();
        assert_eq!(m, lx.neg());
        // Products commute and distribute.
        let n = a(Atom::Workgroups);
        assert_eq!(
            wx.add(&lx).unwrap().mul(&n).unwrap(),
            n.mul(&lx).unwrap().add(&n.mul(&wx).unwrap()).unwrap()
        );
    }

    #[test]
    fn overrides_are_symbols() {
        let own = own_index(None);
        assert_ne!(own, own_index(Some(64)));
        assert_eq!(own.as_constant(), None);
    }

    #[test]
    fn huge_polynomials_give_up() {
        let x = a(Atom::LocalX).add(&a(Atom::WorkgroupX)).unwrap();
        let mut p = x.clone();
        let mut gave_up = false;
        for _ in 0..20 {
            match p.mul(&x) {
                Some(q) => p = q,
                None => {
                    gave_up = true;
                    break;
                }
            }
        }
        assert!(gave_up);
    }
}
