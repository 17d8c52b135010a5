import base64

import numpy as np

from memgym.core.chat import AudioPart, ImagePart, Message, TextPart, decode_wav, to_hf_messages, to_openai_messages


def conversation():
    image = np.zeros((4, 5, 3), dtype=np.uint8)
    image[0, 0] = [255, 0, 0]
    audio = np.sin(np.linspace(0, 20, 1600)).astype(np.float32) * 0.5
    return (
        [
            Message.text("system", "be brief"),
            Message("user", (TextPart("what is this?"), ImagePart(image), AudioPart(audio, 16000))),
        ],
        image,
        audio,
    )


def test_hf_messages_keep_order_and_media():
    messages, image, audio = conversation()
    hf, images, audios = to_hf_messages(messages)
    assert hf[0] == {"role": "system", "content": [{"type": "text", "text": "be brief"}]}
    assert [p["type"] for p in hf[1]["content"]] == ["text", "image", "audio"]
    assert images[0] is image
    np.testing.assert_allclose(audios[0], audio)


def test_openai_payload_encodes_png_and_wav_round_trip():
    messages, image, audio = conversation()
    payload = to_openai_messages(messages)
    assert payload[0] == {"role": "system", "content": "be brief"}
    parts = payload[1]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    from io import BytesIO

    from PIL import Image

    png = base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1])
    assert np.array_equal(np.asarray(Image.open(BytesIO(png))), image)
    wav, rate = decode_wav(base64.b64decode(parts[2]["input_audio"]["data"]))
    assert rate == 16000 and parts[2]["input_audio"]["format"] == "wav"
    np.testing.assert_allclose(wav, audio, atol=1 / 32767)


def test_stereo_audio_is_mixed_to_mono_for_processors():
    stereo = np.stack([np.ones(10), -np.ones(10) * 0.5], axis=1).astype(np.float32)
    _, _, audios = to_hf_messages([Message("user", (AudioPart(stereo, 8000),))])
    np.testing.assert_allclose(audios[0], 0.25)
