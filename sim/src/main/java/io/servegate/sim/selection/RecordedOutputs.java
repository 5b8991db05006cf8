package io.servegate.sim.selection;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A {@link ModelOutputs} from a table of recorded outputs: one row per query, one column per model. */
public final class RecordedOutputs implements ModelOutputs {

    private final Map<String, Integer> columns = new HashMap<>();
    private final String[][] outputs;

    /**
     * @param models  the models, in column order
     * @param outputs {@code outputs[q][m]}: model {@code m}'s output to query {@code q}, null for
     *                no answer; not copied, so the caller must not change it afterwards
     * @throws IllegalArgumentException if a row does not have one entry per model, or a model repeats
     */
    public RecordedOutputs(List<String> models, String[][] outputs) {
        for (int m = 0; m < models.size(); m++) {
            if (columns.put(models.get(m), m) != null) {
                throw new IllegalArgumentException("model '" + models.get(m) + "' repeats in " + models);
            }
        }
        for (int q = 0; q < outputs.length; q++) {
            if (outputs[q].length != models.size()) {
                throw new IllegalArgumentException("row " + q + " has " + outputs[q].length + " outputs for "
                        + models.size() + " models");
            }
        }
        this.outputs = outputs;
    }

    /** @throws IllegalArgumentException for a model or query index the table does not have */
    @Override
    public String output(int index, SelectionQuery query, String model) {
        Integer m = columns.get(model);
        if (m == null || index < 0 || index >= outputs.length) {
            throw new IllegalArgumentException("no recorded output of '" + model + "' for query " + index);
        }
        return outputs[index][m];
    }
}
