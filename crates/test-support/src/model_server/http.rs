//! Just enough HTTP/1.1 for a loopback test server: read one request (Content-Length or chunked
//! body), write a JSON response, or stream a chunked response. Connections are kept alive
//! between requests, as Node's fetch expects.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest head (request line and headers) we accept: real clients send well under 8 KiB.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest body we accept: a chat request with the CLI's system prompt and tools is ~100 KiB.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// One parsed HTTP request.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Header names lower-cased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client asked to close the connection after this exchange.
    pub(crate) fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

fn bad(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// Reads one request; `Ok(None)` when the client closed the connection between requests.
pub(crate) async fn read_request<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> io::Result<Option<Request>> {
    let mut head_bytes = 0usize;
    let mut request_line = String::new();
    // Tolerate stray blank lines between keep-alive requests (RFC 9112 §2.2).
    loop {
        request_line.clear();
        if reader.read_line(&mut request_line).await? == 0 {
            return Ok(None);
        }
        if !request_line.trim().is_empty() {
            break;
        }
    }
    head_bytes += request_line.len();
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(bad(format!("malformed request line {request_line:?}")));
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Err(bad("connection closed inside the request head"));
        }
        head_bytes += line.len();
        if head_bytes > MAX_HEAD_BYTES {
            return Err(bad("request head too large"));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        request.body = read_chunked(reader).await?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| bad(format!("bad content-length {length:?}")))?;
        if length > MAX_BODY_BYTES {
            return Err(bad("request body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await?;
        request.body = body;
    }
    Ok(Some(request))
}

async fn read_chunked<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line).await?;
        let size_hex = size_line.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| bad(format!("bad chunk size {size_line:?}")))?;
        if size == 0 {
            // Trailers, if any, end with an empty line.
            loop {
                let mut trailer = String::new();
                if reader.read_line(&mut trailer).await? == 0 || trailer.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(bad("request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).await?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).await?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes a complete response with a `Content-Length` body.
pub(crate) async fn write_full<W: AsyncWrite + Unpin>(
    writer: &mut W,
    status: u16,
    extra_headers: &[(&str, String)],
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
        reason(status),
        body.len()
    );
    for (name, value) in extra_headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    writer.write_all(head.as_bytes()).await?;
    writer.write_all(body).await?;
    writer.flush().await
}

/// Starts a chunked response; follow with [`write_chunk`] calls and [`finish_chunks`].
pub(crate) async fn start_chunked<W: AsyncWrite + Unpin>(
    writer: &mut W,
    content_type: &str,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\n\
         transfer-encoding: chunked\r\n\r\n"
    );
    writer.write_all(head.as_bytes()).await?;
    writer.flush().await
}

/// Writes one chunk and flushes it, so the client sees it at once.
pub(crate) async fn write_chunk<W: AsyncWrite + Unpin>(
    writer: &mut W,
    data: &[u8],
) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    writer
        .write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    writer.write_all(data).await?;
    writer.write_all(b"\r\n").await?;
    writer.flush().await
}

/// Ends a chunked response.
pub(crate) async fn finish_chunks<W: AsyncWrite + Unpin>(writer: &mut W) -> io::Result<()> {
    writer.write_all(b"0\r\n\r\n").await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    #[tokio::test]
    async fn reads_content_length_and_chunked_bodies_on_one_connection() -> anyhow::Result<()> {
        let raw = b"POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
GET /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let mut reader = BufReader::new(&raw[..]);
        let first = read_request(&mut reader).await?.expect("first request");
        assert_eq!((first.method.as_str(), first.path.as_str()), ("POST", "/a"));
        assert_eq!(first.body, b"hello");
        let second = read_request(&mut reader).await?.expect("second request");
        assert_eq!(second.path, "/b");
        assert_eq!(second.body, b"abcde");
        assert!(read_request(&mut reader).await?.is_none());
        Ok(())
    }

    #[tokio::test]
    async fn rejects_a_garbage_request_line() {
        let mut reader = BufReader::new(&b"nonsense\r\n\r\n"[..]);
        assert!(read_request(&mut reader).await.is_err());
    }
}
