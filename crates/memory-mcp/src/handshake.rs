//! Messages a client sends before `initialize`. Left to rmcp, a first message that is not
//! `initialize` gets an error about a missing `_meta` field and the connection closes, which
//! tells the client nothing it can act on (mem0 #2790: "request before initialization"). The
//! server reads the first lines itself: a request before `initialize` is answered with a plain
//! "initialize first" error and the connection stays open; a notification before it is
//! dropped; from `initialize` on, rmcp reads the stream exactly as the client sent it.

use std::io::Cursor;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The JSON-RPC error code of a request made before initialization (the code the Language
/// Server Protocol uses for "server not initialized").
pub(crate) const NOT_INITIALIZED: i64 = -32002;

/// What to do with one line the client sent before `initialize`.
#[derive(Debug, PartialEq)]
enum Early {
    /// `initialize`, or anything that is not a JSON-RPC request or notification: rmcp reads it.
    Pass,
    /// A notification or a blank line: nothing to answer.
    Drop,
    /// A request: this error answers it.
    Answer(String),
}

/// Answers every request `reader` holds before the client's `initialize` on `writer`, and
/// returns the stream from `initialize` on (the end of the stream when the client closed it).
pub(crate) async fn until_initialize<R, W>(
    reader: R,
    writer: &mut W,
) -> std::io::Result<impl AsyncRead + Send + Unpin + 'static>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(reader);
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok(Cursor::new(line).chain(reader));
        }
        match early(&line) {
            Early::Pass => return Ok(Cursor::new(line).chain(reader)),
            Early::Drop => {}
            Early::Answer(answer) => {
                writer.write_all(answer.as_bytes()).await?;
                writer.write_all(b"\n").await?;
                writer.flush().await?;
            }
        }
    }
}

fn early(line: &[u8]) -> Early {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Early::Drop;
    }
    let Ok(message) = serde_json::from_slice::<Value>(line) else {
        return Early::Pass;
    };
    let method = message.get("method").and_then(Value::as_str);
    match (method, message.get("id")) {
        (Some("initialize"), _) | (None, _) => Early::Pass,
        (Some(_), None) => Early::Drop,
        (Some(method), Some(id)) => Early::Answer(
            json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": NOT_INITIALIZED,
                    "message": format!(
                        "initialize first: `{method}` came before the `initialize` request; \
                         send `initialize`, then the `notifications/initialized` notification, \
                         then this request again"
                    ),
                },
            })
            .to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn requests_are_answered_notifications_dropped_and_initialize_passed_on() {
        let answer = early(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
        let Early::Answer(answer) = answer else {
            panic!("{answer:?}");
        };
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], NOT_INITIALIZED);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("initialize first: `tools/list`")
        );
        assert_eq!(
            early(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Early::Drop
        );
        assert_eq!(early(b"\r\n"), Early::Drop);
        assert_eq!(
            early(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Early::Pass
        );
        assert_eq!(early(b"not json"), Early::Pass);
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

        /// Any line is classified without a panic, and an answer is always one line of JSON.
        #[test]
        fn any_line_is_classified(line in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Early::Answer(answer) = early(&line) {
                prop_assert!(!answer.contains('\n'));
                prop_assert!(serde_json::from_str::<Value>(&answer).is_ok());
            }
        }
    }
}
