//! Little-endian numbers out of bytes (safetensors weights, the token-state cache), decoded a
//! whole buffer at a time: one copy, then a byte swap only on a big-endian machine.
//!
//! A byte-wise iterator (`chunks_exact(4).map(from_le_bytes)`) costs a call per element where
//! the crate's generic helpers are linked from another crate's unoptimised copy (Rust shares
//! generic instances between crates built at opt-level 0 and 1, as this workspace's test
//! profile builds burn's wgpu stack): loading all-mpnet-base-v2's 110M weights took seconds
//! that way.

use bytemuck::Pod;

/// The `T`s that `bytes` holds in little-endian order (a trailing partial value is dropped).
fn decode<T: Pod>(bytes: &[u8], swap: impl Fn(T) -> T) -> Vec<T> {
    let mut values: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
    values.truncate(bytes.len() / std::mem::size_of::<T>());
    if cfg!(target_endian = "big") {
        for v in &mut values {
            *v = swap(*v);
        }
    }
    values
}

/// Little-endian `f32`s.
pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    decode(bytes, |x: f32| f32::from_bits(x.to_bits().swap_bytes()))
}

/// Little-endian `u32`s.
pub(crate) fn u32s(bytes: &[u8]) -> Vec<u32> {
    decode(bytes, u32::swap_bytes)
}

/// Little-endian IEEE half-precision floats.
pub(crate) fn f16s(bytes: &[u8]) -> Vec<half::f16> {
    decode(bytes, |x: half::f16| half::f16::from_bits(x.to_bits().swap_bytes()))
}

/// Little-endian bfloat16s.
pub(crate) fn bf16s(bytes: &[u8]) -> Vec<half::bf16> {
    decode(bytes, |x: half::bf16| half::bf16::from_bits(x.to_bits().swap_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_decodes_as_from_le_bytes_does() {
        let bytes: Vec<u8> = (0_u8..=40).map(|b| b.wrapping_mul(37)).collect();
        let f: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(f32s(&bytes).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), f.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        let u: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(u32s(&bytes), u);
        let h: Vec<u16> = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        assert_eq!(f16s(&bytes).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), h);
        assert_eq!(bf16s(&bytes).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), h);
        assert_eq!(f32s(&bytes).len(), 10, "41 bytes: ten whole values");
        assert!(f32s(&[]).is_empty());
    }
}
