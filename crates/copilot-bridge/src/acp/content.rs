//! Content blocks: what a prompt carries (text, embedded resources, images) and what the agent
//! streams back. A block of a type we do not know is kept whole as raw JSON.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

/// One piece of content in a prompt or a streamed message.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// MIME type, e.g. `image/png`.
        mime_type: String,
        /// Base64 data.
        data: String,
    },
    /// An embedded resource: a file's contents sent along with the prompt.
    Resource {
        /// The resource URI, e.g. `file:///work/src/main.rs`.
        uri: String,
        /// MIME type, if known.
        mime_type: Option<String>,
        /// Text contents (for text resources).
        text: Option<String>,
        /// Base64 contents (for binary resources).
        blob: Option<String>,
    },
    /// A link to a resource the agent may read itself.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// A display name.
        name: String,
    },
    /// A block of a type this client does not know, kept as sent.
    Other(Value),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// The text of a text block, else `None`.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Self::Text { text } => json!({"type": "text", "text": text}),
            Self::Image { mime_type, data } => {
                json!({"type": "image", "mimeType": mime_type, "data": data})
            }
            Self::Resource {
                uri,
                mime_type,
                text,
                blob,
            } => {
                let mut resource = json!({"uri": uri});
                if let Some(mime_type) = mime_type {
                    resource["mimeType"] = json!(mime_type);
                }
                if let Some(text) = text {
                    resource["text"] = json!(text);
                }
                if let Some(blob) = blob {
                    resource["blob"] = json!(blob);
                }
                json!({"type": "resource", "resource": resource})
            }
            Self::ResourceLink { uri, name } => {
                json!({"type": "resource_link", "uri": uri, "name": name})
            }
            Self::Other(raw) => raw.clone(),
        }
    }

    fn from_value(value: Value) -> Self {
        let str_field =
            |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let parsed = match value.get("type").and_then(Value::as_str) {
            Some("text") => str_field(&value, "text").map(|text| Self::Text { text }),
            Some("image") => str_field(&value, "mimeType")
                .zip(str_field(&value, "data"))
                .map(|(mime_type, data)| Self::Image { mime_type, data }),
            Some("resource") => value.get("resource").and_then(|r| {
                Some(Self::Resource {
                    uri: str_field(r, "uri")?,
                    mime_type: str_field(r, "mimeType"),
                    text: str_field(r, "text"),
                    blob: str_field(r, "blob"),
                })
            }),
            Some("resource_link") => str_field(&value, "uri").map(|uri| Self::ResourceLink {
                name: str_field(&value, "name").unwrap_or_else(|| uri.clone()),
                uri,
            }),
            _ => None,
        };
        parsed.unwrap_or(Self::Other(value))
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn known_blocks_round_trip_through_their_wire_shape() -> anyhow::Result<()> {
        let blocks = vec![
            ContentBlock::text("hi"),
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBO".into(),
            },
            ContentBlock::Resource {
                uri: "file:///w/a.rs".into(),
                mime_type: Some("text/x-rust".into()),
                text: Some("fn main() {}".into()),
                blob: None,
            },
            ContentBlock::ResourceLink {
                uri: "file:///w/b".into(),
                name: "b".into(),
            },
        ];
        let wire = serde_json::to_value(&blocks)?;
        assert_eq!(
            wire[2],
            json!({"type": "resource", "resource": {"uri": "file:///w/a.rs",
                   "mimeType": "text/x-rust", "text": "fn main() {}"}})
        );
        let back: Vec<ContentBlock> = serde_json::from_value(wire)?;
        assert_eq!(back, blocks);
        Ok(())
    }

    #[test]
    fn unknown_and_incomplete_blocks_are_kept_raw() -> anyhow::Result<()> {
        let raw = json!([{"type": "hologram", "depth": 3}, {"type": "text"}]);
        let blocks: Vec<ContentBlock> = serde_json::from_value(raw.clone())?;
        assert_eq!(
            blocks,
            vec![
                ContentBlock::Other(raw[0].clone()),
                ContentBlock::Other(raw[1].clone())
            ]
        );
        assert_eq!(serde_json::to_value(&blocks)?, raw);
        Ok(())
    }
}
