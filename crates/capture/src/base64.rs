//! Standard base64 (RFC 4648, `+/`, `=` padding) for array data in captures.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// How many bytes `text` decodes to, without decoding it (so a declared
/// size can be checked before anything is allocated).
pub fn decoded_len(text: &str) -> Result<usize, String> {
    let t = text.as_bytes();
    if !t.len().is_multiple_of(4) {
        return Err(format!("its base64 text has {} characters, not a multiple of 4 (the file is cut or edited)", t.len()));
    }
    let pad = t.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return Err("its base64 text ends with more than two `=`".into());
    }
    Ok(t.len() / 4 * 3 - pad)
}

pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let len = decoded_len(text)?;
    let mut out = Vec::with_capacity(len);
    let value = |c: u8| -> Result<u32, String> {
        match c {
            b'A'..=b'Z' => Ok((c - b'A') as u32),
            b'a'..=b'z' => Ok((c - b'a' + 26) as u32),
            b'0'..=b'9' => Ok((c - b'0' + 52) as u32),
            b'+' => Ok(62),
            b'/' => Ok(63),
            b'=' => Ok(0),
            _ => Err(format!("its base64 text holds `{}`, which is not a base64 character", c.escape_ascii())),
        }
    };
    for quad in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for &c in quad {
            n = n << 6 | value(c)?;
        }
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    out.truncate(len);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_length() {
        for n in 0..10usize {
            let bytes: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(97)).collect();
            let text = encode(&bytes);
            assert_eq!(decoded_len(&text).unwrap(), n);
            assert_eq!(decode(&text).unwrap(), bytes);
        }
        assert_eq!(encode(b"Man"), "TWFu");
        assert_eq!(encode(b"Ma"), "TWE=");
    }

    #[test]
    fn rejects_bad_text() {
        assert!(decode("TWF").is_err());
        assert!(decode("TW!u").is_err());
        assert!(decode("T===").is_err());
    }
}
