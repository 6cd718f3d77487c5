"""Sequence models: an LSTM part-of-speech tagger and a batch_first LSTM regressor."""

# ruff: noqa: B007 - tutorial code keeps its loop variables (for t in range(2000): ...)
from __future__ import annotations

import numpy as np

import gradlab
from tests.oracle import needs_torch, torch
from tests.tutorials._shared import assert_close_runs, same_start

# --- 4. Sequence models: an LSTM part-of-speech tagger and a batch_first LSTM regressor ---------


def lstm_tagger(torch, start=None, epochs: int = 300) -> dict:
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim  # import torch.nn as nn, ...

    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    training_data = [
        # Tags are: DET - determiner; NN - noun; V - verb
        # For example, the word "The" is a determiner
        ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
        ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
    ]
    word_to_ix = {}
    # For each words-list (sentence) and tags-list in each tuple of training_data
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:  # word has not been assigned an index yet
                word_to_ix[word] = len(word_to_ix)  # Assign each word with a unique index
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}  # Assign each tag with a unique index

    EMBEDDING_DIM = 6
    HIDDEN_DIM = 6

    class LSTMTagger(nn.Module):

        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()  # noqa: UP008 - the tutorial's spelling
            self.hidden_dim = hidden_dim

            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

            # The LSTM takes word embeddings as inputs, and outputs hidden states
            # with dimensionality hidden_dim.
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)

            # The linear layer that maps from hidden state space to tag space
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            tag_scores = F.log_softmax(tag_space, dim=1)
            return tag_scores

    model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
    initial = same_start(torch, model, start)
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    # See what the scores are before training
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)
        before = tag_scores.numpy().copy()

    losses = []
    for epoch in range(epochs):
        for sentence, tags in training_data:
            # Step 1. Remember that Pytorch accumulates gradients.
            # We need to clear them out before each instance
            model.zero_grad()

            # Step 2. Get our inputs ready for the network, that is, turn them into
            # Tensors of word indices.
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)

            # Step 3. Run our forward pass.
            tag_scores = model(sentence_in)

            # Step 4. Compute the loss, gradients, and update the parameters by
            #  calling optimizer.step()
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

    # See what the scores are after training
    predictions = []
    with torch.no_grad():
        for sentence, _ in training_data:
            tag_scores = model(prepare_sequence(sentence, word_to_ix))
            predictions.append(tag_scores.argmax(dim=1).tolist())
    targets = [[tag_to_ix[t] for t in tags] for _, tags in training_data]
    return {"initial": initial, "before": before, "losses": losses,
            "predictions": predictions, "targets": targets,
            "state_keys": list(model.state_dict().keys())}


def test_lstm_tagger_learns_the_tags():
    run = lstm_tagger(gradlab)
    assert run["before"].shape == (5, 3)
    np.testing.assert_allclose(np.exp(run["before"]).sum(1), 1.0, rtol=1e-5)
    assert run["predictions"] == run["targets"]
    assert run["losses"][-1] < 0.2 < run["losses"][0]
    assert run["state_keys"] == ["word_embeddings.weight", "lstm.weight_ih_l0",
                                 "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0",
                                 "hidden2tag.weight", "hidden2tag.bias"]


@needs_torch
def test_lstm_tagger_matches_pytorch():
    ours = lstm_tagger(gradlab)
    theirs = lstm_tagger(torch, start=ours["initial"])
    assert ours["state_keys"] == theirs["state_keys"]
    assert_close_runs(ours, theirs, ["before", "losses"], rtol=1e-3, atol=1e-5)
    assert ours["predictions"] == theirs["predictions"]


def sine_lstm(torch, start=None, epochs: int = 25) -> dict:
    """Predict the next value of a sine wave from the previous 20 (a common blog tutorial)."""
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

    t = np.linspace(0, 12 * np.pi, 400, dtype=np.float32)
    wave = np.sin(t)
    window = 20
    X = np.stack([wave[i:i + window] for i in range(len(wave) - window)])[:, :, None]
    y = wave[window:][:, None]
    dataset = TensorDataset(torch.from_numpy(X), torch.from_numpy(y))
    loader = DataLoader(dataset, batch_size=64, shuffle=False)

    class SineLSTM(nn.Module):
        def __init__(self, hidden_size=16):
            super().__init__()
            self.lstm = nn.LSTM(input_size=1, hidden_size=hidden_size, num_layers=1,
                                batch_first=True)
            self.fc = nn.Linear(hidden_size, 1)

        def forward(self, x):
            h0 = torch.zeros(1, x.size(0), self.lstm.hidden_size)
            c0 = torch.zeros(1, x.size(0), self.lstm.hidden_size)
            out, (hn, cn) = self.lstm(x, (h0, c0))
            return self.fc(out[:, -1, :])  # the last time step's hidden state

    model = SineLSTM()
    initial = same_start(torch, model, start)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    epoch_losses, grad_norms = [], []
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            grad_norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
            optimizer.step()
            total += loss.item() * inputs.size(0)
        epoch_losses.append(total / len(dataset))
    return {"initial": initial, "epoch_losses": epoch_losses, "grad_norms": grad_norms}


def test_sine_lstm_learns_to_continue_the_wave():
    run = sine_lstm(gradlab)
    assert run["epoch_losses"][-1] < 0.01 < run["epoch_losses"][0]


@needs_torch
def test_sine_lstm_matches_pytorch():
    ours = sine_lstm(gradlab, epochs=10)
    theirs = sine_lstm(torch, start=ours["initial"], epochs=10)
    assert_close_runs(ours, theirs, ["epoch_losses", "grad_norms"], rtol=2e-3, atol=1e-5)
