//! Checksums built into some token formats: GitHub's `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` tokens
//! and npm's `npm_` tokens end in six base62 digits of a CRC32 over the random body, so a
//! candidate whose tail matches is a real token shape rather than a look-alike.

/// CRC32 (IEEE 802.3, reflected polynomial `0xEDB88320`), the one zlib and GitHub use.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Base62 digits in the order GitHub's tokens use: digits, upper case, lower case.
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Width of the checksum tail: 62^6 > 2^32, so six digits hold any CRC32.
pub(crate) const CHECKSUM_DIGITS: usize = 6;

/// `value` in base62, left-padded with `0` to six digits.
pub(crate) fn base62_checksum(value: u32) -> [u8; CHECKSUM_DIGITS] {
    let mut out = [b'0'; CHECKSUM_DIGITS];
    let mut v = value;
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(v % 62) as usize];
        v /= 62;
    }
    out
}

/// True when `token` (e.g. `ghp_` + 30 random + 6 checksum characters) ends with the base62
/// CRC32 of its random body. Both the body alone and prefix + body are accepted as the
/// checksummed text, since published descriptions of the format differ on that point.
pub(crate) fn has_valid_crc_tail(token: &str) -> bool {
    let Some(sep) = token.find('_') else {
        return false;
    };
    let b = token.as_bytes();
    if b.len() < sep + 1 + CHECKSUM_DIGITS + 1 {
        return false;
    }
    let (head, tail) = b.split_at(b.len() - CHECKSUM_DIGITS);
    let body = &head[sep + 1..];
    tail == base62_checksum(crc32(body)) || tail == base62_checksum(crc32(head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_reference_vector() {
        // The standard check value for CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn base62_pads_to_six_digits() {
        assert_eq!(&base62_checksum(0), b"000000");
        assert_eq!(&base62_checksum(61), b"00000z");
        assert_eq!(&base62_checksum(62), b"000010");
        assert_eq!(&base62_checksum(u32::MAX), b"4gfFC3");
    }

    #[test]
    fn accepts_a_token_built_with_its_checksum_and_rejects_a_flipped_one() {
        let body = "Xq3Lm8Rz0vTb5NwYc2Hd7KpFg4Js9A";
        let sum = base62_checksum(crc32(body.as_bytes()));
        let token = format!("ghp_{body}{}", std::str::from_utf8(&sum).unwrap());
        assert!(has_valid_crc_tail(&token));
        let mut flipped = token.into_bytes();
        flipped[6] = if flipped[6] == b'a' { b'b' } else { b'a' };
        assert!(!has_valid_crc_tail(std::str::from_utf8(&flipped).unwrap()));
    }
}
